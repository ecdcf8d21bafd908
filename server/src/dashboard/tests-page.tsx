import type { HistoryRow, TestCaseMetricsRow } from '../analytics/index.ts';
import type { BrokeWhen, GroupSeen, RunPoint } from '../comparisons/index.ts';
import type { SlowerTestRow } from '../durations/index.ts';
import { commitsCompareUrl } from '../runs/index.ts';
import type { FailureGroupRow, LinkedIssue } from '../failuregroups/index.ts';
import type { Project } from '../projects/index.ts';
import { trendFigure } from './components/trend.tsx';
import { DAY_CHOICES, Field, Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table } from './components/table.tsx';
import { IssueSection } from './issue-section.tsx';
import { Owners } from './owners.tsx';

const OUTCOME_COLOURS: Record<string, string> = { passed: '#1a7f37', failed: '#cf222e', flaky: '#9a6700', skipped: '#8c959f' };

/** A test's outcomes, oldest to newest, as a strip of squares. */
export function HistoryStrip(props: { history: HistoryRow[]; size?: number }) {
  const size = props.size ?? 10;
  const ordered = [...props.history].reverse();
  const counts = Object.entries(ordered.reduce<Record<string, number>>((acc, row) => ({ ...acc, [row.outcome]: (acc[row.outcome] ?? 0) + 1 }), {}))
    .map(([outcome, n]) => `${n} ${outcome}`)
    .join(', ');
  const label = ordered.length === 0 ? 'No run in the window' : `Last ${ordered.length} runs, oldest first: ${counts}`;
  const width = Math.max(1, ordered.length * (size + 2));
  return (
    <svg class="strip" role="img" aria-label={label} width={width} height={size} viewBox={`0 0 ${width} ${size}`} xmlns="http://www.w3.org/2000/svg">
      <title>{label}</title>
      {ordered.map((row, i) => (
        <rect x={i * (size + 2)} y="0" width={size} height={size} rx="2" fill={OUTCOME_COLOURS[row.outcome] ?? '#8c959f'}>
          <title>{`run #${row.test_run_number}: ${row.outcome}`}</title>
        </rect>
      ))}
    </svg>
  );
}

export interface TestsView {
  rows: TestCaseMetricsRow[];
  history: Map<string, HistoryRow[]>;
  filter: { search?: string; tag?: string; owner?: string; order_by: 'fail_rate' | 'flaky_rate' | 'duration' | 'last_run'; days: number };
}

const rate = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`);

const ORDERS = [
  ['fail_rate', 'fail rate'],
  ['flaky_rate', 'flaky rate'],
  ['duration', 'mean duration'],
  ['last_run', 'last run'],
] as const;

function TestRow(props: { project: Project; row: TestCaseMetricsRow; history: HistoryRow[] }) {
  const { project, row } = props;
  return (
    <tr data-test={row.test_case_id}>
      <td>
        <a href={`/projects/${project.id}/tests/${row.test_case_id}`}>{row.test_name}</a>
        <div class="muted">
          {row.file_path} · {row.project_name}
          {row.tags.length > 0 ? ` · ${row.tags.join(' ')}` : null}
        </div>
        <Owners owners={row.owners} listPath={`/projects/${project.id}/tests`} />
      </td>
      <td>{row.total_runs}</td>
      <td>{rate(row.fail_count, row.total_runs)}</td>
      <td>{rate(row.flaky_count, row.total_runs)}</td>
      <td>{row.mean_duration === null ? '–' : `${row.mean_duration} ms`}</td>
      <td>
        <HistoryStrip history={props.history} />
      </td>
    </tr>
  );
}

export function testsPage(viewer: Viewer, project: Project, view: TestsView): string {
  const { filter } = view;
  return renderPage({
    title: `Tests · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Tests of {project.name}</h1>
        <form class="filters" method="get" role="search" aria-label="Find tests">
          <Field label="Search">
            <input name="search" value={filter.search ?? ''} placeholder="title or file" />
          </Field>
          <Field label="Tag">
            <input name="tag" value={filter.tag ?? ''} placeholder="@smoke" />
          </Field>
          <Field label="Owner">
            <input name="owner" value={filter.owner ?? ''} placeholder="@org/team" />
          </Field>
          <Field label="Rank by">
            <select name="order_by">
              <Options choices={ORDERS} value={filter.order_by} />
            </select>
          </Field>
          <Field label="Days">
            <select name="days">
              <Options choices={DAY_CHOICES} value={filter.days} />
            </select>
          </Field>
          <button type="submit">Find</button>
        </form>
        {view.rows.length === 0 ? (
          <Empty>No test ran in this window with these filters.</Empty>
        ) : (
          <Table head={['Test', 'Runs', 'Fail rate', 'Flaky rate', 'Mean duration', 'Latest runs']}>
            {view.rows.map((row) => (
              <TestRow project={project} row={row} history={view.history.get(row.test_case_id) ?? []} />
            ))}
          </Table>
        )}
      </>
    ),
  });
}

export interface TestView {
  id: string;
  title: string;
  file: string;
  runnerProject: string;
  /** From CODEOWNERS and `owner` annotations, as its last listing found them. */
  owners: string[];
  history: HistoryRow[];
  broke: BrokeWhen[];
  groupsSeen: GroupSeen[];
  groups: FailureGroupRow[];
  slower: SlowerTestRow[];
  snoozes: { id: number; snooze_until: Date; description: string | null; source: string }[];
  /** The test's tracker issue, and whether the project has a tracker to file one in. */
  issue: LinkedIssue | null;
  hasTracker: boolean;
  now: Date;
}

const day = (at: Date) => at.toISOString().slice(0, 10);

function RunAt(props: { project: Project; point: RunPoint }) {
  const { project, point } = props;
  return (
    <>
      <a href={`/projects/${project.id}/runs/${point.test_run_id}`}>run #{point.test_run_number}</a>
      {point.commit ? (
        <>
          {' ('}
          <code>{point.commit.slice(0, 12)}</code>)
        </>
      ) : null}{' '}
      on {day(point.run_at)}
    </>
  );
}

/** Per environment and branch: failing since when (and what it last passed on), or passing. */
function BrokeSection(props: { project: Project; broke: BrokeWhen[] }) {
  const { project, broke } = props;
  if (broke.length === 0) return <p class="muted">No run has ended this test yet.</p>;
  const rows = broke.map((line) => {
    const where = `${line.environment_name}${line.branch ? ` · ${line.branch}` : ''}`;
    if (!line.first_failure)
      return (
        <tr data-line={where}>
          <td>{where}</td>
          <td>
            passing: {line.latest.outcome} in <RunAt project={project} point={line.latest} />
          </td>
        </tr>
      );
    const commits =
      line.last_pass?.commit && line.first_failure.commit && line.last_pass.commit !== line.first_failure.commit
        ? commitsCompareUrl(project.repo_url, line.last_pass.commit, line.first_failure.commit)
        : null;
    return (
      <tr data-line={where}>
        <td>{where}</td>
        <td>
          <strong>failing</strong> since <RunAt project={project} point={line.first_failure} />, {line.failed_runs} failed run
          {line.failed_runs === 1 ? '' : 's'}
          {line.last_pass ? (
            <>
              ; last passed in <RunAt project={project} point={line.last_pass} />
            </>
          ) : (
            '; no pass in its history'
          )}
          {commits ? (
            <>
              {' · '}
              <a href={commits} rel="noreferrer">
                what changed between them
              </a>
            </>
          ) : null}
        </td>
      </tr>
    );
  });
  return (
    <Table class="broke" scroll head={['Environment · branch', 'Now']}>
      {rows}
    </Table>
  );
}

function GroupsSeen(props: { project: Project; seen: GroupSeen[] }) {
  const { project, seen } = props;
  if (seen.length === 0) return <p class="muted">In no failure group.</p>;
  return (
    <ul class="groups-seen">
      {seen.map((g) => (
        <li>
          <a href={`/projects/${project.id}/failure-groups/${encodeURIComponent(g.failure_group_id)}`}>{g.title}</a>{' '}
          <span class="muted">
            {g.runs} failed run{g.runs === 1 ? '' : 's'}, from run #{g.first.test_run_number} ({day(g.first.run_at)}) to run #{g.last.test_run_number} (
            {day(g.last.run_at)})
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Where the test got slower and stayed so: per environment, from which run, by how much. */
function Slower(props: { project: Project; slower: SlowerTestRow[] }) {
  const { project, slower } = props;
  if (slower.length === 0) return null;
  return (
    <div class="notice slower" role="note">
      <p>This test got slower and stayed slower:</p>
      <ul>
        {slower.map((shift) => {
          const rise = Math.round(((shift.recent_ms - shift.baseline_ms) / Math.max(shift.baseline_ms, 1)) * 100);
          return (
            <li>
              <strong>{rise}% slower</strong> in {shift.environment_name} since{' '}
              {shift.started_run_id ? (
                <a href={`/projects/${project.id}/runs/${shift.started_run_id}`}>run #{shift.started_run_number}</a>
              ) : (
                `run #${shift.started_run_number}`
              )}
              : median {shift.recent_ms} ms, was {shift.baseline_ms} ms
            </li>
          );
        })}
      </ul>
    </div>
  );
}

export function testPage(viewer: Viewer, project: Project, view: TestView): string {
  const oldestFirst = [...view.history].reverse();
  // A bar a run: its duration, coloured by its outcome; a point links to its run.
  const durations = trendFigure({
    label: `Duration and outcome of the last ${oldestFirst.length} runs, oldest first`,
    barUnit: 'ms',
    points: oldestFirst.map((row) => ({
      x: `#${row.test_run_number}`,
      bars: [{ value: row.total_duration ?? 0, colour: OUTCOME_COLOURS[row.outcome] ?? '#8c959f', label: row.outcome }],
      line: null,
      text: `run #${row.test_run_number} on ${day(row.run_at)}: ${row.outcome}${row.total_duration === null ? '' : `, ${row.total_duration} ms`}`,
      href: `/projects/${project.id}/runs/${row.test_run_id}`,
    })),
  });
  // Groups it is a member of that its recent runs did not fail in (older, or attached by hand).
  const shown = new Set(view.groupsSeen.map((g) => g.failure_group_id));
  const older = view.groups.filter((g) => !shown.has(g.id));
  return renderPage({
    title: `${view.title} · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>{view.title}</h1>
        <p class="muted">
          {view.file}
          {view.runnerProject ? ` · ${view.runnerProject}` : null} · <code>{view.id}</code>
        </p>
        <Owners owners={view.owners} listPath={`/projects/${project.id}/tests`} />
        <IssueSection subject={{ kind: 'test', id: view.id }} issue={view.issue} hasTracker={view.hasTracker} />
        <h2>What broke and when</h2>
        <BrokeSection project={project} broke={view.broke} />
        <h2>Latest runs</h2>
        <HistoryStrip history={view.history} size={14} />
        <h2>Duration and outcome</h2>
        <Slower project={project} slower={view.slower} />
        {durations}
        <h2>Failure groups over time</h2>
        <GroupsSeen project={project} seen={view.groupsSeen} />
        {older.length === 0 ? null : (
          <p class="muted">
            Also a member of:{' '}
            {older.map((g, i) => (
              <>
                {i > 0 ? ', ' : null}
                <a href={`/projects/${project.id}/failure-groups/${encodeURIComponent(g.id)}`}>{g.title}</a> ({g.status})
              </>
            ))}
          </p>
        )}
        <h2>Snoozes</h2>
        {view.snoozes.length === 0 ? (
          <p class="muted">Never snoozed.</p>
        ) : (
          <ul>
            {view.snoozes.map((s) => (
              <li>
                {s.snooze_until > view.now ? 'until' : 'ended'} {s.snooze_until.toISOString().slice(0, 10)}
                {s.source === 'auto' ? ' (quarantine)' : null}
                {s.description ? `: ${s.description}` : null}
              </li>
            ))}
          </ul>
        )}
      </>
    ),
  });
}
