import type { ComponentChildren } from 'preact';
import { renderToStaticMarkup } from 'preact-render-to-string';
import { isWebUrl } from '../xml.ts';
import type { Project } from '../projects/index.ts';
import { showsInline, traceViewerLink, type AttachmentView } from '../artifacts/index.ts';
import type { SummaryDetail } from './schema.ts';
import type { RunPageDetails } from './details.ts';
import { branchNote, shownBranch } from './branch.ts';
import { repositoryUrl } from './repository.ts';
import type { ProjectCount, RunRow } from './store.ts';
import { describeSelection } from '../selection/index.ts';

// The run report is components (docs/decisions/server-jsx.md): the renderer escapes every text and
// attribute value, so a test's title, error or attachment name stays text.

/** A run state's colour, wherever a run is shown. */
export const STATE_COLOURS: Record<string, string> = {
  passed: '#1a7f37',
  failed: '#cf222e',
  error: '#9a6700',
  cancelled: '#57606a',
  running: '#0969da',
  queued: '#0969da',
  pending: '#0969da',
};

/** The branch the run is for (the CI's), and the test repository's when another ran. */
function BranchOf(props: { run: RunRow }) {
  const branch = shownBranch(props.run);
  return branch ? (
    <>
      {' · branch '}
      <strong class="branch">{branch}</strong>
    </>
  ) : null;
}

/** Why the tests ran from another branch than the run's, when they did. */
function NoteOnBranch(props: { run: RunRow }) {
  const note = branchNote(props.run);
  return note ? <p class="note branch-note">{note}</p> : null;
}

/** How the server handed the run's units out (issue 56); nothing where Playwright chose the order. */
function OrderOf(props: { run: RunRow }) {
  const strategy = props.run.order_strategy;
  if (strategy === null) return null;
  return (
    <>
      {' · order '}
      <strong class="order-strategy" data-order-strategy={strategy}>
        {strategy === 'failures-first' ? 'likely failures first' : 'longest first'}
      </strong>
    </>
  );
}

/** The CI job that asked for the run. */
function CiJobLink(props: { url: string | null }) {
  return props.url && isWebUrl(props.url) ? (
    <>
      {' · '}
      <a class="ci-job" href={props.url} rel="noreferrer">
        CI job
      </a>
    </>
  ) : null;
}

/** The build's URL: a link when it is http(s), else text (a `javascript:` link would run on a click). */
function BuildLink(props: { url: string | null }) {
  const { url } = props;
  if (!url) return null;
  return isWebUrl(url) ? (
    <>
      {' · build '}
      <a href={url} rel="noreferrer">
        {url}
      </a>
    </>
  ) : (
    <>{` · build ${url}`}</>
  );
}

/**
 * The pull or merge request a run's build was for: linked on the repository's host when the
 * project's repository is an https URL on GitHub, GitLab or Bitbucket, named as that host names it.
 */
function PullRequestLink(props: { repoUrl: string | null; number: number | null }) {
  const { number } = props;
  if (number === null) return null;
  const url = repositoryUrl(props.repoUrl);
  const host = url?.hostname ?? '';
  const [label, path] = host.includes('gitlab')
    ? [`merge request !${number}`, `/-/merge_requests/${number}`]
    : host === 'bitbucket.org'
      ? [`pull request #${number}`, `/pull-requests/${number}`]
      : [`pull request #${number}`, host === 'github.com' || host.startsWith('github.') ? `/pull/${number}` : null];
  return url && path ? (
    <>
      {' · '}
      <a href={`${url.origin}${url.pathname.replace(/\/$/, '')}${path}`} rel="noreferrer">
        {label}
      </a>
    </>
  ) : (
    <>{` · ${label}`}</>
  );
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** The path and query of a signed URL: the page links on its own origin, whatever PUBLIC_URL says. */
function local(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

function isTrace(attachment: AttachmentView): boolean {
  return attachment.name === 'trace' || (attachment.content_type === 'application/zip' && attachment.name.startsWith('trace'));
}

/** One attachment: a screenshot inline, a video playable, a trace one click from the viewer, another file to download. */
function AttachmentItem(props: { attachment: AttachmentView }) {
  const a = props.attachment;
  const url = local(a.url);
  const label = `${a.name} (retry ${a.retry})`;
  // A tab of its own: the viewer is a page of its own, and the run page stays where the person was.
  if (isTrace(a))
    return (
      <li>
        <a class="trace" href={traceViewerLink(url)} target="_blank" rel="noopener">
          Open trace
        </a>
      </li>
    );
  if (showsInline(a.content_type) && a.content_type.startsWith('image/')) {
    return (
      <li>
        <figure>
          <a href={url}>
            <img src={url} alt={label} loading="lazy" />
          </a>
          <figcaption>{a.name}</figcaption>
        </figure>
      </li>
    );
  }
  if (showsInline(a.content_type))
    return (
      <li>
        <figure>
          <video controls preload="metadata" src={url}></video>
          <figcaption>{a.name}</figcaption>
        </figure>
      </li>
    );
  return (
    <li>
      <a href={url} title={label}>
        {a.name}
      </a>
    </li>
  );
}

/**
 * A failure's attachments, a block per try (first try first): a try's trace sits with that try's
 * screenshot and video, never beside another's.
 */
function Attachments(props: { attachments: AttachmentView[] }) {
  if (props.attachments.length === 0) return null;
  const byRetry = new Map<number, AttachmentView[]>();
  for (const a of props.attachments) byRetry.set(a.retry, [...(byRetry.get(a.retry) ?? []), a]);
  return (
    <div class="tries">
      {[...byRetry.entries()]
        .sort(([a], [b]) => a - b)
        .map(([retry, items]) => (
          <section class="try" data-retry={retry}>
            <h3>{retry === 0 ? 'First try' : `Retry ${retry}`}</h3>
            <ul class="attachments">
              {items.map((attachment) => (
                <AttachmentItem attachment={attachment} />
              ))}
            </ul>
          </section>
        ))}
    </div>
  );
}

/** A failure group as people name it: its title, or its id until the group is made. */
function groupName(t: Pick<SummaryDetail, 'failure_group_id' | 'failure_group_title'>): string {
  return t.failure_group_title ?? t.failure_group_id ?? '';
}

/** Whether a failure is new since the previous run of the environment and branch, or was there too. */
function SincePrevious(props: { test: SummaryDetail; previous: RunPageDetails['previous'] }) {
  const { test, previous } = props;
  if (test.status !== 'failed' || !previous) return null;
  return (
    <>
      {' '}
      {previous.failed.has(test.test_case_id) ? (
        <span class="tag still" title={`also failed in run #${previous.number}`}>
          still failing
        </span>
      ) : (
        <span class="tag new" title={`passed or did not run in run #${previous.number}`}>
          new
        </span>
      )}
    </>
  );
}

function TestRow(props: { test: SummaryDetail; actions: ReportActions; previous: RunPageDetails['previous'] }) {
  const { test: t, actions, previous } = props;
  const groupId = t.failure_group_id;
  return (
    <tr class={t.status} data-test={t.test_case_id}>
      <td class="status">
        <span class={`tag ${t.status}`}>{t.status}</span>
        <SincePrevious test={t} previous={previous} />
        {t.failure_category && t.failure_category !== 'unknown' ? (
          <>
            {' '}
            <span class="tag kind" title="the kind of failure">
              {t.failure_category}
            </span>
          </>
        ) : null}
        {t.snoozed ? (
          <>
            {' '}
            <span class="tag snoozed">snoozed</span>
          </>
        ) : null}
      </td>
      <td class="test">
        <strong>{t.title}</strong>
        <div class="file">
          {t.file_path}
          {t.runner_project ? ` · ${t.runner_project}` : null}
        </div>
        {t.owners.length > 0 ? <div class="owners">Owners: {t.owners.join(' ')}</div> : null}
        {t.status === 'skipped' && t.skip_reason ? <div class="skip-reason">Skipped: {t.skip_reason}</div> : null}
        {t.error_message ? (
          <pre class="error" tabindex={0}>
            {t.error_message}
          </pre>
        ) : null}
        {t.status === 'failed' || t.status === 'flaky' ? <Attachments attachments={t.attachments} /> : null}
        {actions.test ? actions.test(t) : null}
      </td>
      <td class="duration" data-label="Duration">
        {formatDuration(t.duration)}
      </td>
      <td class="retries" data-label="Retries">
        {t.retries}
      </td>
      <td class="group" data-label="Failure group">
        {groupId ? <a href={actions.groupLink ? actions.groupLink(groupId) : `#group-${groupId}`}>{groupName(t)}</a> : null}
      </td>
    </tr>
  );
}

const TEST_COLUMNS = ['Status', 'Test', 'Duration', 'Retries', 'Failure group'];

function Section(props: { title: string; tests: SummaryDetail[]; actions?: ReportActions; previous?: RunPageDetails['previous'] }) {
  const { title, tests } = props;
  if (tests.length === 0) return null;
  // A live run's page adds rows to the section its results belong to (dashboard/client/live.ts).
  return (
    <>
      <h2>
        {title} ({tests.length})
      </h2>
      <table class="tests" data-section={title}>
        <Head columns={TEST_COLUMNS} />
        <tbody>
          {tests.map((t) => (
            <TestRow test={t} actions={props.actions ?? {}} previous={props.previous ?? null} />
          ))}
        </tbody>
      </table>
    </>
  );
}

function Head(props: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {props.columns.map((name) => (
          <th scope="col">{name}</th>
        ))}
      </tr>
    </thead>
  );
}

/** The counts by runner project; nothing for a suite without runner projects (Playwright's unnamed one). */
function ProjectBreakdown(props: { counts: ProjectCount[] }) {
  if (props.counts.every((row) => row.runner_project === '')) return null;
  const byProject = new Map<string, Record<string, number>>();
  for (const row of props.counts) {
    const tally = byProject.get(row.runner_project) ?? { passed: 0, failed: 0, flaky: 0, skipped: 0 };
    tally[row.status] = (tally[row.status] ?? 0) + row.count;
    byProject.set(row.runner_project, tally);
  }
  return (
    <>
      <h2>By runner project</h2>
      <table class="breakdown">
        <Head columns={['Project', 'Passed', 'Failed', 'Flaky', 'Skipped']} />
        <tbody>
          {[...byProject.entries()]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([name, c]) => (
              <tr>
                <td>{name}</td>
                <td>{c.passed}</td>
                <td>{c.failed}</td>
                <td>{c.flaky}</td>
                <td>{c.skipped}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </>
  );
}

function FailureGroups(props: { tests: SummaryDetail[] }) {
  const groups = new Map<string, SummaryDetail[]>();
  for (const t of props.tests) if (t.failure_group_id) groups.set(t.failure_group_id, [...(groups.get(t.failure_group_id) ?? []), t]);
  if (groups.size === 0) return null;
  return (
    <>
      <h2>Failure groups ({groups.size})</h2>
      <ul class="groups">
        {[...groups.entries()].map(([id, members]) => (
          <li id={`group-${id}`}>
            <strong>{groupName(members[0] as SummaryDetail)}</strong>
            {': '}
            {members.map((m) => `${m.title}${m.runner_project ? ` (${m.runner_project})` : ''}`).join(', ')}
          </li>
        ))}
      </ul>
    </>
  );
}

/** The run report's styles, for a page of its own or the dashboard's. */
export const RUN_REPORT_STYLE = `
.meta{color:#57606a;margin-bottom:1rem} .counts{display:flex;gap:.75rem;flex-wrap:wrap;margin:1rem 0}
.count{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;min-width:5rem} .count b{display:block;font-size:1.4rem}
table{border-collapse:collapse;width:100%;margin-bottom:1.5rem} th,td{border-bottom:1px solid #d0d7de;padding:.4rem;text-align:left;vertical-align:top}
.tag{border-radius:4px;padding:0 .35rem;font-size:.8rem;color:#fff} .tag.passed{background:#1a7f37} .tag.failed{background:#cf222e}
.tag.flaky{background:#9a6700} .tag.skipped{background:#6e7781} .tag.snoozed{background:#6639ba} .tag.new{background:#bf3989} .tag.still{background:#57606a} .tag.kind{background:#fff;color:#1f2328;border:1px solid #8c959f}
.file{color:#57606a;font-size:.85rem} section.try h3{font-size:.85rem;margin:.5rem 0 .25rem;color:#57606a} ul.attachments{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-start} ul.attachments figure{margin:0} ul.attachments img,ul.attachments video{max-width:24rem;max-height:16rem;border:1px solid #d0d7de} figcaption{color:#57606a;font-size:.8rem} pre.error{background:#fff1f0;border-left:3px solid #cf222e;padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere;max-height:20rem;overflow:auto}
pre.reason{background:#fff8c5;padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere} p.notice{background:#ddf4ff;border-left:3px solid #0969da;padding:.5rem}
.meta,td{overflow-wrap:anywhere} .state{background:#57606a} ${Object.entries(STATE_COLOURS)
  .map(([state, colour]) => `.state-${state}{background:${colour}}`)
  .join(' ')} .skip-reason{color:#57606a;font-style:italic} ul.attachments img,ul.attachments video{max-width:100%}
@media (max-width:700px){table{display:block;overflow-x:auto}}`;

/** What a page adds to the report: actions on the run, and on each failed or flaky test. */
export interface ReportActions {
  run?: ComponentChildren;
  test?: (test: SummaryDetail) => ComponentChildren;
  /** Where a failure group opens; by default, its entry further down the page. */
  groupLink?: (groupId: string) => string;
  /** The page with every test, when some are left out. */
  showAll?: string;
  /** Where this run is compared with another (the previous of its environment and branch). */
  compareLink?: (otherRunId: number) => string;
}

/** Why a run shows its counts and no tests, or that it is kept whatever the policy. */
function RetentionNote(props: { run: RunRow }) {
  const { run } = props;
  if (run.details_deleted_at) {
    return (
      <p class="notice" data-retention="deleted">
        The retention policy deleted this run's results and attachments on {run.details_deleted_at.toISOString().slice(0, 10)}; its counts and its place in the
        analytics stay.
      </p>
    );
  }
  return run.pinned ? (
    <p class="notice" data-retention="pinned">
      Pinned: this run keeps its results and attachments whatever the retention policy.
    </p>
  ) : null;
}

/** The run as a person reads it: counts, failures first with their error text, flaky, snoozed, per project. */
export function RunReport(props: { project: Project; run: RunRow; details: RunPageDetails; actions?: ReportActions }) {
  const { project, run, details } = props;
  const actions = props.actions ?? {};
  const { tests } = details;
  const failed = tests.filter((t) => t.status === 'failed');
  const flaky = tests.filter((t) => t.status === 'flaky');
  const others = tests.filter((t) => t.status === 'passed' || t.status === 'skipped');
  const counts: [string, number][] = [
    ['Total', run.total_count],
    ['Passed', run.success_count],
    ['Failed', run.failed_count],
    ['Flaky', run.flaky_count],
    ['Skipped', run.skipped_count],
    ['Snoozed', run.snoozed_count],
  ];
  const reason = run.error_reason ?? run.cancel_reason;
  return (
    <>
      <h1>
        Run #{run.number} <span class={`state state-${run.state}`}>{run.state}</span>
      </h1>
      <div class="meta">
        {project.name} ({project.repo_name}) · environment <strong>{run.environment_name}</strong> ({run.environment_slug})
        <BranchOf run={run} />
        {run.test_run_head_sha ? ` · commit ${run.test_run_head_sha.slice(0, 12)}` : null}
        <PullRequestLink repoUrl={project.repo_url} number={run.pull_request} />
        {` · duration ${formatDuration(run.duration)}`}
        <OrderOf run={run} />
        <BuildLink url={run.build_url} />
        <CiJobLink url={run.ci_build_url} />
      </div>
      <NoteOnBranch run={run} />
      {actions.run}
      {details.previous && actions.compareLink ? (
        <p class="compare">
          <a href={actions.compareLink(details.previous.id)}>Compare with run #{details.previous.number}</a>{' '}
          <span class="muted">(the previous of this environment and branch)</span>
        </p>
      ) : null}
      <RetentionNote run={run} />
      {run.selection ? (
        <p class="notice" data-selection={run.selection.mode}>
          {describeSelection(run.selection)}
        </p>
      ) : null}
      {reason ? <pre class="reason">{reason}</pre> : null}
      <div class="counts">
        {counts.map(([label, n]) => (
          <div class="count" data-count={label.toLowerCase()}>
            <b>{n}</b>
            {label}
          </div>
        ))}
      </div>
      <Section title="Failed" tests={failed} actions={actions} previous={details.previous} />
      <Section title="Flaky" tests={flaky} actions={actions} />
      <FailureGroups tests={tests} />
      <ProjectBreakdown counts={details.breakdown} />
      <Section title="Passed and skipped" tests={others} actions={{ groupLink: actions.groupLink }} />
      {details.hidden > 0 && actions.showAll ? (
        <p class="more">
          and {details.hidden} more passed or skipped tests: <a href={actions.showAll}>show every test</a>
        </p>
      ) : null}
    </>
  );
}

/** The run page of its signed link (summary_url): the report alone. */
export function renderRunPage(project: Project, run: RunRow, details: RunPageDetails, showAll: string): string {
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
        <title>{`Run #${run.number} ${run.state} · ${project.name} · ${run.environment_name}`}</title>
        <style
          // trusted: a constant stylesheet of this file's own, no value of a run or a person in it.
          dangerouslySetInnerHTML={{
            __html: `
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem;margin:0 0 .25rem} .state{color:#fff;border-radius:1rem;padding:.1rem .7rem;font-size:1rem}
${RUN_REPORT_STYLE}
`,
          }}
        />
      </head>
      <body>
        <RunReport project={project} run={run} details={details} actions={{ showAll }} />
      </body>
    </html>
  );
  return `<!doctype html>\n${renderToStaticMarkup(page)}`;
}
