import type { LinkedIssue } from '../failuregroups/index.ts';
import { ApiForm, Field } from './components/forms.tsx';

// The tracker issue of a failure group or a test, on its page: its state as Proctor last read or
// left it, and (for a member) the forms that create one or link an existing one, or unlink it.

export const TRACKER_NAMES = { github: 'GitHub', gitlab: 'GitLab', jira: 'Jira', linear: 'Linear' } as const;

/** An issue's name on its tracker: GitHub and GitLab name issues by number (#12), Jira and Linear by key (OPS-12). */
export function issueName(tracker: keyof typeof TRACKER_NAMES, key: string): string {
  return `${TRACKER_NAMES[tracker]} ${tracker === 'github' || tracker === 'gitlab' ? '#' : ''}${key}`;
}

function Linked(props: { issue: LinkedIssue }) {
  const { issue } = props;
  const name = issueName(issue.tracker, issue.key ?? '');
  return (
    <section aria-labelledby="issue" data-issue-state={issue.state ?? 'unknown'}>
      <h2 id="issue">Issue</h2>
      <p>
        {issue.key === null ? <span class="muted">being created on the tracker…</span> : issue.url ? <a href={issue.url}>{name}</a> : name}
        {' · '}
        {issue.state ? <strong class={`issue-${issue.state}`}>{issue.state}</strong> : <span class="muted">state not read yet</span>}
      </p>
      <ApiForm api={`DELETE /api/tracker-links/${issue.link_id}`} then="reload" label="Unlink" />
    </section>
  );
}

export function IssueSection(props: { subject: { kind: 'failure_group' | 'test'; id: string }; issue: LinkedIssue | null; hasTracker: boolean }) {
  const { subject, issue } = props;
  if (issue) return <Linked issue={issue} />;
  if (!props.hasTracker)
    return (
      <section aria-labelledby="issue">
        <h2 id="issue">Issue</h2>
        <p class="muted">No linked issue. The project has no tracker (PUT /api/tracker-settings).</p>
      </section>
    );
  const hidden = <input type="hidden" name={subject.kind === 'failure_group' ? 'failure_group_id' : 'test_case_id'} value={subject.id} />;
  return (
    <section aria-labelledby="issue">
      <h2 id="issue">Issue</h2>
      <p class="muted">No linked issue.</p>
      <ApiForm api="POST /api/tracker-links" then="reload" label="Create an issue">
        {hidden}
      </ApiForm>
      <ApiForm api="POST /api/tracker-links" then="reload" label="Link an existing issue">
        {hidden}
        <Field for="issue-reference" label="Issue URL or number">
          <input id="issue-reference" name="issue" required maxlength={2000} size={40} />
        </Field>
      </ApiForm>
    </section>
  );
}
