import type { Tx } from '../db.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { getDestination, type StoredDestination } from '../notifications/index.ts';
import type { Pages } from './compose.ts';
import { createIssueFor } from './follow.ts';
import { queueAction } from './outbox-store.ts';
import type { PutTrackerSettings, SubjectKind } from './schema.ts';
import { getSettings, insertLink, jiraSite, type LinkRow, subjectExists, trackerOfSettings } from './store.ts';
import { checkReceiverUrl, type ReceiverPolicy } from '../outbound/addresses.ts';

/** A Jira issue of the settings' project, by its key (`OPS-12`) or its URL on the settings' site (`…/browse/OPS-12`). */
export function jiraReference(site: string, project: string, reference: string): { key: string; url: string } {
  const key = /^([A-Z][A-Z0-9_]*-[1-9]\d{0,9})$/.exec(reference)?.[1] ?? /^(.*)\/browse\/([A-Z][A-Z0-9_]*-[1-9]\d{0,9})\/?$/.exec(reference)?.[2];
  if (!key) throw new InvalidInputError('body.issue: give the Jira issue\'s key ("OPS-12") or its URL (…/browse/OPS-12)');
  if (reference.includes('/') && !reference.startsWith(`${site}/browse/`))
    throw new InvalidInputError(`body.issue: the issue is not on ${site}, where this project's tracker files issues`);
  if (!key.startsWith(`${project}-`))
    throw new InvalidInputError(`body.issue: the issue is not in the Jira project ${project}, where this project's tracker files issues`);
  return { key, url: `${site}/browse/${key}` };
}

/** A Linear issue by its identifier (`ENG-12`) or its URL (https://linear.app/WORKSPACE/issue/ENG-12/…). */
export function linearReference(reference: string): { key: string; url: string | null } {
  const key =
    /^([A-Z][A-Z0-9]*-[1-9]\d{0,9})$/.exec(reference)?.[1] ??
    /^https:\/\/linear\.app\/[^/]+\/issue\/([A-Z][A-Z0-9]*-[1-9]\d{0,9})(\/[^/]*)?$/.exec(reference)?.[1];
  if (!key) throw new InvalidInputError('body.issue: give the Linear issue\'s identifier ("ENG-12") or its URL');
  return { key, url: null };
}

// The rules of the trackers' API: settings that name a GitHub or GitLab destination of the project,
// and links made by hand, to a new issue or an existing one.

export async function checkSettings(sql: Tx, projectId: number, given: PutTrackerSettings, receivers: ReceiverPolicy): Promise<void> {
  if (given.jira || given.linear) {
    const before = await getSettings(sql, projectId);
    if (given.jira) {
      // A stored token is kept for the site and the account it was given for only: a write-only secret is never sent elsewhere.
      const kept = before?.jira_token != null && before.jira_url === jiraSite(given.jira.url) && before.jira_email === (given.jira.email ?? null);
      if (given.jira.api_token === undefined && !kept)
        throw new InvalidInputError(
          'body.jira.api_token: required (an API token for Cloud, with email; a personal access token for Data Center), and again when the site or the email changes',
        );
      const problem = await checkReceiverUrl(given.jira.url, receivers);
      if (problem) throw new InvalidInputError(`body.jira.url: ${problem}`);
    }
    if (given.linear && given.linear.api_key === undefined && before?.linear_api_key == null)
      throw new InvalidInputError('body.linear.api_key: required (a Linear API key)');
    return;
  }
  const destination = await getDestination(sql, projectId, given.destination_id as number);
  if (!destination) throw new InvalidInputError(`body.destination_id: no notification destination ${given.destination_id} in this project`);
  if (given.tracker !== undefined && given.tracker !== destination.type)
    throw new InvalidInputError(`body.tracker: destination ${destination.id} is ${destination.type}, not ${given.tracker}`);
  if (destination.type !== 'github' && destination.type !== 'gitlab')
    throw new InvalidInputError(
      `body.destination_id: destination ${destination.id} is ${destination.type}; issues are filed through a github or gitlab destination`,
    );
}

/**
 * The issue `reference` names in the destination's repository: its number (`12`, `#12`) or its
 * URL, whose repository (GitHub's owner/name, GitLab's project path) must be the destination's.
 */
export function issueReference(destination: StoredDestination, reference: string): { key: string; url: string | null } {
  const number = /^#?([1-9]\d{0,9})$/.exec(reference)?.[1];
  if (number) return { key: number, url: null };
  let url: URL;
  try {
    url = new URL(reference);
  } catch {
    throw new InvalidInputError('body.issue: give the issue\'s number ("12", "#12") or its URL');
  }
  const path = url.pathname.replace(/\/+$/, '');
  const match = destination.type === 'github' ? /^\/(.+)\/issues\/([1-9]\d{0,9})$/.exec(path) : /^\/(.+)\/-\/issues\/([1-9]\d{0,9})$/.exec(path);
  const where = destination.type === 'github' ? destination.repo : destination.project;
  if (!match || !/^https?:$/.test(url.protocol))
    throw new InvalidInputError(`body.issue: not the URL of a ${destination.type === 'github' ? 'GitHub' : 'GitLab'} issue`);
  if (decodeURIComponent(match[1] as string).toLowerCase() !== String(where).toLowerCase())
    throw new InvalidInputError(`body.issue: the issue is not in ${where}, where this project's tracker files issues`);
  return { key: match[2] as string, url: `${url.origin}${path}` };
}

/** A link of a failure group or a test of the project: to an existing issue (read at once through the outbox), or to one Proctor creates. */
export async function linkSubject(
  sql: Tx,
  projectId: number,
  subject: { kind: SubjectKind; id: string },
  reference: string | undefined,
  createdBy: string | null,
  pages: Pages,
  now: Date,
): Promise<LinkRow> {
  const settings = await getSettings(sql, projectId);
  if (!settings) throw new ConflictError('the project has no tracker: PUT /api/tracker-settings names the destination whose repository gets its issues');
  if (!(await subjectExists(sql, projectId, subject.kind, subject.id)))
    throw new NotFoundError(subject.kind === 'failure_group' ? 'failure group not found' : 'test case not found');
  const taken = () =>
    new ConflictError(`the ${subject.kind === 'failure_group' ? 'failure group' : 'test'} is linked to an issue already: delete that link first`);
  if (reference === undefined) {
    const link = await createIssueFor(sql, projectId, settings, subject.kind, subject.id, 'created', createdBy, pages, now);
    if (!link) throw taken();
    return link;
  }
  const tracker = trackerOfSettings(settings);
  if (!tracker) throw new ConflictError("the tracker settings' destination files no issues");
  let issue: { key: string; url: string | null };
  if (tracker === 'jira') issue = jiraReference(settings.jira_url as string, settings.jira_project as string, reference);
  else if (tracker === 'linear') issue = linearReference(reference);
  else issue = issueReference((await getDestination(sql, projectId, settings.destination_id as number)) as StoredDestination, reference);
  const link = await insertLink(
    sql,
    projectId,
    {
      subjectKind: subject.kind,
      subjectId: subject.id,
      destinationId: settings.tracker === 'destination' ? settings.destination_id : null,
      tracker,
      origin: 'linked',
      issue,
      createdBy,
    },
    now,
  );
  if (!link) throw taken();
  await queueAction(sql, link, 'refresh', {}, null, now);
  return link;
}
