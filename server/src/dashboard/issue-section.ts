import type { LinkedIssue } from '../failuregroups/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm } from './forms.ts';

// The tracker issue of a failure group or a test, on its page: its state as Proctor last read or
// left it, and (for a member) the forms that create one or link an existing one, or unlink it.

export const TRACKER_NAMES = { github: 'GitHub', gitlab: 'GitLab', jira: 'Jira', linear: 'Linear' } as const;

export function issueSection(subject: { kind: 'failure_group' | 'test'; id: string }, issue: LinkedIssue | null, hasTracker: boolean): string {
  const heading = '<h2 id="issue">Issue</h2>';
  if (issue) {
    // GitHub and GitLab name issues by number (#12); Jira and Linear by key (OPS-12).
    const hash = issue.tracker === 'github' || issue.tracker === 'gitlab' ? '#' : '';
    const name = `${TRACKER_NAMES[issue.tracker]} ${hash}${e(issue.key ?? '')}`;
    const shown = issue.key === null ? '<span class="muted">being created on the tracker…</span>' : issue.url ? `<a href="${e(issue.url)}">${name}</a>` : name;
    const state = issue.state ? `<strong class="issue-${issue.state}">${issue.state}</strong>` : '<span class="muted">state not read yet</span>';
    const unlink = apiForm(`DELETE /api/tracker-links/${issue.link_id}`, 'reload', 'Unlink');
    return `<section aria-labelledby="issue" data-issue-state="${e(issue.state ?? 'unknown')}">${heading}<p>${shown} · ${state}</p>${unlink}</section>`;
  }
  if (!hasTracker)
    return `<section aria-labelledby="issue">${heading}<p class="muted">No linked issue. The project has no tracker (PUT /api/tracker-settings).</p></section>`;
  const field = subject.kind === 'failure_group' ? 'failure_group_id' : 'test_case_id';
  const hidden = `<input type="hidden" name="${field}" value="${e(subject.id)}">`;
  const create = apiForm('POST /api/tracker-links', 'reload', 'Create an issue', hidden);
  const link = apiForm(
    'POST /api/tracker-links',
    'reload',
    'Link an existing issue',
    `${hidden}<label for="issue-reference">Issue URL or number<input id="issue-reference" name="issue" required maxlength="2000" size="40"></label>`,
  );
  return `<section aria-labelledby="issue">${heading}<p class="muted">No linked issue.</p>${create}${link}</section>`;
}
