// What Proctor does on an issue tracker, whatever the tracker: GitHub Issues and GitLab issues here;
// Jira (Cloud and Data Center) and Linear fit the same shape, each behind its own maintained client.
// An issue is named by its `key`, the tracker's own name for it as text: GitHub's number, GitLab's
// iid (a Jira key `OPS-12` or a Linear identifier `ENG-12` alike). Texts are Markdown, which GitHub,
// GitLab and Linear take as is (Jira's would be converted by its own tracker).

export interface IssueRef {
  key: string;
  url: string;
}

export interface IssueRead extends IssueRef {
  state: 'open' | 'closed';
  /** When it was last closed, as the tracker says; null while it never was (or the tracker does not say). */
  closedAt: string | null;
}

export interface IssueTracker {
  /** The issue whose body carries `marker`, among those Proctor filed: a create whose answer was lost made it. */
  findByMarker(marker: string): Promise<IssueRef | null>;
  create(issue: { title: string; body: string }): Promise<IssueRef>;
  read(key: string): Promise<IssueRead>;
  setState(key: string, state: 'open' | 'closed'): Promise<void>;
  /** Whether a comment on the issue carries `marker`: the retried action posted it already. */
  hasComment(key: string, marker: string): Promise<boolean>;
  comment(key: string, body: string): Promise<void>;
  /** What a failed call says, and whether trying again could change it (a refusal will not). */
  failure(error: unknown): { error: string; permanent: boolean };
}

/** The label of the issues Proctor files: the trackers' searches for a marker look among them only. */
export const ISSUE_LABEL = 'proctor';

/** An HTML comment (hidden where Markdown is shown) that a search can find in a body. */
export const markerComment = (kind: 'link' | 'action', id: string) => `<!-- proctor:${kind}:${id} -->`;

/** A refusal (no access, nothing there) will not change by retrying; a timeout, a 429 or a 5xx may. */
export function permanentStatus(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}
