import type { ComponentChildren } from 'preact';
import { type Digest, DIGEST_PERIODS } from '../digests/index.ts';
import type { Project } from '../projects/index.ts';
import { formatDuration } from '../runs/index.ts';
import { Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';

/** "1 run", "2 runs". */
function runCount(n: number): string {
  return `${n} run${n === 1 ? '' : 's'}`;
}
import { issueName } from './issue-section.tsx';

// An environment's digest as a page: what the daily or weekly report says, each test a link to its
// page and each run where something turned a link to the run.

export interface DigestView {
  environments: { id: number; name: string }[];
  digest: Digest | null;
}

const PERIOD_LABELS: Record<Digest['period'], string> = { day: 'the last day', week: 'the last 7 days' };

const percent = (rate: number | null) => (rate === null ? '–' : `${Math.round(rate * 1000) / 10}%`);

function TestLink(props: { projectId: number; test: { test_case_id: string; title: string; file_path: string } }) {
  const { test } = props;
  return (
    <>
      <a href={`/projects/${props.projectId}/tests/${test.test_case_id}`}>{test.title}</a>
      {test.file_path ? (
        <>
          {' '}
          <span class="muted">{test.file_path}</span>
        </>
      ) : null}
    </>
  );
}

function RunLink(props: { projectId: number; id: number | null; number: number }) {
  return props.id === null ? <>run #{props.number}</> : <a href={`/projects/${props.projectId}/runs/${props.id}`}>run #{props.number}</a>;
}

interface TestItem {
  test_case_id: string;
  title: string;
  file_path: string;
}

/** A section listing tests, each a link to its page followed by what the digest says of it. */
function List<T extends TestItem>(props: { projectId: number; heading: string; empty: string; items: T[]; says: (value: T) => ComponentChildren }) {
  const id = `digest-${props.heading.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>
        {props.heading} ({props.items.length})
      </h2>
      {props.items.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <ul>
          {props.items.map((value) => (
            <li>
              <TestLink projectId={props.projectId} test={value} />: {props.says(value)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The project's open tracker issues (their count all of them): each subject a link to its page, each issue to the tracker's. */
function OpenIssues(props: { projectId: number; digest: Digest }) {
  const { projectId, digest } = props;
  const shown = digest.open_issues.length;
  return (
    <section aria-labelledby="digest-open-issues">
      <h2 id="digest-open-issues">Open issues ({digest.open_issues_total})</h2>
      {shown === 0 ? (
        <p class="muted">No tracker issue of the project is open.</p>
      ) : (
        <>
          <ul>
            {digest.open_issues.map((issue) => {
              const name = issueName(issue.tracker, issue.issue_key);
              const subject =
                issue.subject_kind === 'test'
                  ? `/projects/${projectId}/tests/${issue.subject_id}`
                  : `/projects/${projectId}/failure-groups/${encodeURIComponent(issue.subject_id)}`;
              return (
                <li>
                  <a href={subject}>{issue.title}</a>: open, {issue.issue_url ? <a href={issue.issue_url}>{name}</a> : name}
                </li>
              );
            })}
          </ul>
          {digest.open_issues_total > shown ? <p class="muted">and {digest.open_issues_total - shown} more</p> : null}
        </>
      )}
    </section>
  );
}

function Filters(props: { view: DigestView }) {
  const { view } = props;
  return (
    <form class="filters" method="get" aria-label="Digest">
      <label>
        Environment
        <select name="environment_id">
          <Options choices={view.environments.map((env) => [env.id, env.name] as const)} value={view.digest?.environment_id} />
        </select>
      </label>
      <label>
        Period
        <select name="period">
          <Options choices={DIGEST_PERIODS.map((period) => [period, PERIOD_LABELS[period]] as const)} value={view.digest?.period} />
        </select>
      </label>
      <button type="submit">Show</button>
    </form>
  );
}

export function digestPage(viewer: Viewer, project: Project, view: DigestView): string {
  const { digest } = view;
  if (!digest)
    return renderPage({
      title: `Digest · ${project.name}`,
      viewer,
      project,
      children: (
        <>
          <h1>Digest of {project.name}</h1>
          <p class="empty">No environment yet: a digest tells what an environment's runs brought in a day or a week.</p>
        </>
      ),
    });
  const { runs } = digest;
  const change =
    runs.pass_rate !== null && runs.previous.pass_rate !== null
      ? ` (${runs.pass_rate >= runs.previous.pass_rate ? '+' : '−'}${Math.round(Math.abs(runs.pass_rate - runs.previous.pass_rate) * 1000) / 10} points)`
      : '';
  const p = project.id;
  return renderPage({
    title: `Digest · ${digest.environment_name} · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Digest of {project.name}</h1>
        <Filters view={view} />
        <p>
          {digest.environment_name}, {PERIOD_LABELS[digest.period]} ({digest.from} to {digest.to}, UTC):{' '}
          <strong>
            {runCount(runs.runs)}, {percent(runs.pass_rate)} passed
          </strong>
          {change}; the period before: {runCount(runs.previous.runs)}, {percent(runs.previous.pass_rate)} passed.
        </p>
        <List
          projectId={p}
          heading="Turned broken"
          empty="No test broke in this period."
          items={digest.turned_broken}
          says={(t) => (
            <>
              failing since <RunLink projectId={p} id={t.run_id} number={t.run_number} />
            </>
          )}
        />
        <List
          projectId={p}
          heading="Turned flaky"
          empty="No test turned flaky in this period."
          items={digest.turned_flaky}
          says={(t) => (
            <>
              first flaky in <RunLink projectId={p} id={t.run_id} number={t.run_number} />
            </>
          )}
        />
        <List
          projectId={p}
          heading="Got slower"
          empty="No test got slower and stayed so."
          items={digest.slower}
          says={(t) => (
            <>
              {formatDuration(t.recent_ms)}, was {formatDuration(t.baseline_ms)}, since{' '}
              <RunLink projectId={p} id={t.started_run_id} number={t.started_run_number} />
            </>
          )}
        />
        <List
          projectId={p}
          heading="Got flakier"
          empty="No test got flakier than in the 14 days before."
          items={digest.flakier}
          says={(t) =>
            `flaky in ${percent(t.flaky_rate)} of ${runCount(t.runs_counted)}, was ${t.previous_flaky_rate === null ? 'not run' : percent(t.previous_flaky_rate)} in the 14 days before`
          }
        />
        <List
          projectId={p}
          heading="Flakiest"
          empty="No test is classed flaky over the last 14 days (a test is classed once it has run often enough)."
          items={digest.flakiest}
          says={(t) => `flaky in ${t.flaky_runs} of ${runCount(t.runs_counted)}`}
        />
        <List
          projectId={p}
          heading="Most failing"
          empty="No test failed in this period."
          items={digest.most_failing}
          says={(t) => `failed in ${t.fail_count} of ${runCount(t.runs)}`}
        />
        <List
          projectId={p}
          heading="Slowest"
          empty="No test ran in this period."
          items={digest.slowest}
          says={(t) => `${formatDuration(t.mean_duration)} on average over ${runCount(t.runs)}`}
        />
        <OpenIssues projectId={p} digest={digest} />
      </>
    ),
  });
}
