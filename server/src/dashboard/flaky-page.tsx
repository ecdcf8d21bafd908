import type { VNode } from 'preact';
import type { DayRun } from '../analytics/index.ts';
import { DAY_MS } from '../context.ts';
import { type DailyFlakiness, type EventRow, type FlakinessRow, MIN_RUNS, type QuarantinePolicy, runsNeeded } from '../flaky/index.ts';
import type { Project } from '../projects/index.ts';
import type { SnoozeRow } from '../snoozes/index.ts';
import { trendFigure } from './components/trend.tsx';
import { ApiForm, Field, FoldedForm, Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Table } from './components/table.tsx';
import { snoozeAuthor } from './snoozes-page.tsx';
import { Owners } from './owners.tsx';

/** The page's class filter: one class, every class, or what a team lead looks for first. */
export const CLASS_CHOICES = ['flaky-broken', 'flaky', 'broken', 'unknown', 'healthy', 'all'] as const;
export type ClassChoice = (typeof CLASS_CHOICES)[number];
const CLASS_LABELS: Record<ClassChoice, string> = {
  'flaky-broken': 'flaky or broken, and early failures',
  flaky: 'flaky',
  broken: 'broken',
  unknown: 'too few runs',
  healthy: 'healthy',
  all: 'every class',
};

export interface FlakyTestsView {
  filter: { environmentId: number; class: ClassChoice; search: string; owner: string; days: number };
  environments: { id: number; name: string }[];
  rows: FlakinessRow[];
  total: number;
  /** The window's days, oldest first, and each listed test's daily counts (by `environment:test`). */
  days: string[];
  trends: Map<string, DailyFlakiness[]>;
  /** Each day's last ended run in an environment (by `environment:day`): what a day of a trend links to. */
  dayRuns: Map<string, DayRun>;
  /** The snooze in force over each listed test where it is listed (by `environment:test`). */
  quarantines: Map<string, SnoozeRow>;
  authors: Map<string, string>;
  events: EventRow[];
  titles: Map<string, string>;
  policy: QuarantinePolicy;
  /** The tests the window counts runs for (in the environment chosen), and the most runs counted for one. */
  counted: { tests: number; mostRuns: number };
  now: Date;
}

export const trendKey = (environmentId: number, testCaseId: string): string => `${environmentId}:${testCaseId}`;

const dateOf = (at: Date) => at.toISOString().slice(0, 10);

/** A test's daily flaky share over the window as small bars, each day a link to its last run; a day without a counted run is a grey tick. */
function trend(project: Project, environmentId: number, days: string[], daily: DailyFlakiness[], dayRuns: Map<string, DayRun>): VNode {
  const byDay = new Map(daily.map((row) => [row.day, row]));
  const flakyDays = daily.filter((row) => row.flaky_runs > 0).length;
  return trendFigure({
    label: `Flaky on ${flakyDays} of the ${daily.length} days with runs in the last ${days.length} days`,
    small: true,
    points: days.map((day) => {
      const row = byDay.get(day);
      const run = dayRuns.get(trendKey(environmentId, day));
      const href = run ? `/projects/${project.id}/runs/${run.id}` : null;
      if (!row || row.counted_runs === 0)
        return { x: day, bars: [{ value: 0.05, colour: '#d0d7de', label: 'no run' }], line: null, text: `${day}: no counted run`, href: null };
      return {
        x: day,
        bars: [{ value: Math.max(0.05, row.flaky_runs / row.counted_runs), colour: row.flaky_runs > 0 ? '#9a6700' : '#1a7f37', label: 'flaky share' }],
        line: null,
        text: `${day}: flaky in ${row.flaky_runs} of ${row.counted_runs} runs${run ? `; last run #${run.number}` : ''}`,
        href,
      };
    }),
  });
}

/** Whether and why the test is quarantined where it is listed, and the action that changes it. */
function QuarantineCell(props: { row: FlakinessRow; view: FlakyTestsView }) {
  const { row, view } = props;
  const snooze = view.quarantines.get(trendKey(row.environment_id, row.test_case_id));
  if (snooze) {
    const everywhere = snooze.scoped_to_environment_id === null;
    return (
      <>
        <strong>{snooze.source === 'auto' ? 'Quarantined' : 'Snoozed'}</strong> until {dateOf(snooze.snooze_until)}
        {everywhere ? ' in every environment' : null}
        <div class="muted">
          by {snoozeAuthor(snooze, view.authors)} (<span class="source">{snooze.source}</span>){snooze.description ? `: ${snooze.description}` : null}
        </div>
        <ApiForm api={`PATCH /api/snoozes/${snooze.id}`} then="reload" label="Release">
          {snooze.test_ids.length === 1 ? (
            <input type="hidden" name="expire_now" data-type="bool" value="true" />
          ) : (
            <input type="hidden" name="test_ids" data-type="csv" value={snooze.test_ids.filter((id) => id !== row.test_case_id).join(',')} />
          )}
        </ApiForm>
      </>
    );
  }
  const { policy } = view;
  const until = dateOf(new Date(view.now.getTime() + policy.expiry_days * DAY_MS));
  const id = `quarantine-${row.environment_id}-${row.test_case_id}`;
  return (
    <>
      {policy.mode === 'suggest' && row.class === 'flaky' && row.score >= policy.threshold ? (
        <div class="muted">The policy would quarantine it (score at least {policy.threshold})</div>
      ) : null}
      <FoldedForm kind="snooze" summary="Quarantine" api="POST /api/snoozes">
        <ApiForm api="POST /api/snoozes" then="reload" label="Quarantine this test">
          <input type="hidden" name="test_ids" data-type="list" value={row.test_case_id} />
          <input type="hidden" name="scoped_to_environment_id" data-type="number" value={row.environment_id} />
          <Field for={`${id}-until`} label="Until">
            <input id={`${id}-until`} type="date" name="snooze_until" data-type="end-of-day" min={dateOf(view.now)} value={until} required />
          </Field>
          <Field for={`${id}-why`} label="Reason">
            <input id={`${id}-why`} name="description" maxlength={5000} value="Quarantined from the flaky tests page" data-optional="" />
          </Field>
        </ApiForm>
      </FoldedForm>
    </>
  );
}

/** The class, and for a test with too few runs how many more it needs. */
function ClassCell(props: { row: FlakinessRow }) {
  const { row } = props;
  if (row.class !== 'unknown') return <span class={`class class-${row.class}`}>{row.class}</span>;
  const needed = runsNeeded(row);
  return (
    <>
      <span class="class class-unknown">too few runs</span>
      <div class="muted needs">
        {needed} more run{needed === 1 ? '' : 's'} for a class
      </div>
    </>
  );
}

/** How often the test was flaky, and failed when it did, of its counted runs. */
function RunsCell(props: { row: FlakinessRow }) {
  const { row } = props;
  return (
    <>
      {row.flaky_runs} of {row.runs_counted}
      {row.failed_runs > 0 ? (
        <div class="muted">
          failed in {row.failed_runs} of {row.runs_counted}
        </div>
      ) : null}
    </>
  );
}

/** Why nothing is listed: no counted run yet, nothing flaky or failing, or the search. */
function EmptyState(props: { view: FlakyTestsView }) {
  const { counted, filter } = props.view;
  const window = `the last ${filter.days} days`;
  if (counted.tests === 0)
    return (
      <p class="empty">
        No run of {filter.environmentId ? 'this environment' : 'this project'} has been counted in {window} yet. A run counts once it ends passed or failed with
        at most 80% of its tests failed (a run where nearly everything failed says more about its environment than its tests). A test gets a class after{' '}
        {MIN_RUNS} counted runs; before that it is listed here as soon as it fails or passes on a retry.
      </p>
    );
  const tests = `${counted.tests} test${counted.tests === 1 ? '' : 's'}`;
  const early =
    counted.mostRuns < MIN_RUNS
      ? ` Tests get a class after ${MIN_RUNS} counted runs (the most any has is ${counted.mostRuns}); meanwhile the ones that fail or pass on a retry are listed under "${CLASS_LABELS['flaky-broken']}".`
      : '';
  if (filter.owner)
    return (
      <p class="empty">
        No test owned by {filter.owner}
        {filter.search ? ` whose title or file contains "${filter.search}"` : null} is {CLASS_LABELS[filter.class]} in {window} ({tests} counted).{early}
      </p>
    );
  if (filter.search)
    return (
      <p class="empty">
        No test whose title or file contains "{filter.search}" is {CLASS_LABELS[filter.class]} in {window} ({tests} counted).{early}
      </p>
    );
  if (filter.class === 'flaky-broken')
    return (
      <p class="empty">
        None of the {tests} counted in {window} was flaky or failed: nothing to look at.{early}
      </p>
    );
  return (
    <p class="empty">
      No test is in the class "{CLASS_LABELS[filter.class]}" in {window} ({tests} counted).{early}
    </p>
  );
}

function TestRow(props: { project: Project; row: FlakinessRow; view: FlakyTestsView; environments: Map<number, string> }) {
  const { project, row, view } = props;
  const key = trendKey(row.environment_id, row.test_case_id);
  return (
    <tr data-test={row.test_case_id} data-environment={row.environment_id}>
      <td>
        <a href={`/projects/${project.id}/tests/${row.test_case_id}`}>{row.title || row.test_case_id}</a>
        <div class="muted">{[row.file_path, row.runner_project].filter(Boolean).join(' · ')}</div>
        <Owners owners={row.owners} listPath={`/projects/${project.id}/flaky-tests`} />
      </td>
      <td>{props.environments.get(row.environment_id) ?? '?'}</td>
      <td>
        <ClassCell row={row} />
      </td>
      <td>{(row.score * 100).toFixed(0)}%</td>
      <td>
        <RunsCell row={row} />
      </td>
      <td>{row.last_flaky_run_id === null ? '–' : <a href={`/projects/${project.id}/runs/${row.last_flaky_run_id}`}>#{row.last_flaky_run_number}</a>}</td>
      <td>{trend(project, row.environment_id, view.days, view.trends.get(key) ?? [], view.dayRuns)}</td>
      <td>
        <QuarantineCell row={row} view={view} />
      </td>
    </tr>
  );
}

function Filters(props: { view: FlakyTestsView }) {
  const { view } = props;
  const { filter } = view;
  return (
    <form class="filters" method="get" role="search" aria-label="Find flaky tests">
      <Field label="Environment">
        <select name="environment_id">
          <Options choices={[[0, 'every environment'], ...view.environments.map((env) => [env.id, env.name] as const)]} value={filter.environmentId} />
        </select>
      </Field>
      <Field label="Class">
        <select name="class">
          <Options choices={CLASS_CHOICES.map((choice) => [choice, CLASS_LABELS[choice]] as const)} value={filter.class} />
        </select>
      </Field>
      <Field label="Search">
        <input name="search" value={filter.search} placeholder="title or file" />
      </Field>
      <Field label="Owner">
        <input name="owner" value={filter.owner} placeholder="@org/team" />
      </Field>
      <button type="submit">Find</button>
    </form>
  );
}

function EventsSection(props: { project: Project; view: FlakyTestsView; environments: Map<number, string> }) {
  const { project, view, environments } = props;
  if (view.events.length === 0)
    return (
      <>
        <h2>Quarantine events</h2>
        <p class="muted">The quarantine policy has quarantined and released nothing yet.</p>
      </>
    );
  return (
    <>
      <h2>Quarantine events</h2>
      <Table class="events" scroll head={['When (UTC)', 'Test', 'Environment', 'Action', 'Reason']}>
        {view.events.map((event) => (
          <tr>
            <td>{event.created_at.toISOString().slice(0, 16).replace('T', ' ')}</td>
            <td>
              <a href={`/projects/${project.id}/tests/${event.test_case_id}`}>{view.titles.get(event.test_case_id) ?? event.test_case_id}</a>
            </td>
            <td>{environments.get(event.environment_id) ?? '?'}</td>
            <td>{event.action}</td>
            <td>{event.reason}</td>
          </tr>
        ))}
      </Table>
    </>
  );
}

const MODE_TEXT = {
  off: 'off: nothing is quarantined by it',
  suggest: 'suggest: it shows what it would quarantine',
  auto: 'auto: it quarantines and releases',
};

export function flakyTestsPage(viewer: Viewer, project: Project, view: FlakyTestsView): string {
  const environments = new Map(view.environments.map((env) => [env.id, env.name]));
  const { policy } = view;
  return renderPage({
    title: `Flaky tests · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Flaky tests of {project.name}</h1>
        <p class="muted">
          A test's score is the share of its counted runs of the last {view.filter.days} days where it passed on a retry or flipped on the same commit.
          Quarantine policy: {MODE_TEXT[policy.mode]} (threshold {policy.threshold}, at most {policy.cap_percent}% of an environment's tests, for{' '}
          {policy.expiry_days} days or until {policy.release_after_clean_runs} clean runs);{' '}
          <a href={`/projects/${project.id}/settings#quarantine`}>change it in Settings</a>.
        </p>
        <Filters view={view} />
        {view.rows.length === 0 ? (
          <EmptyState view={view} />
        ) : (
          <>
            <Table class="flaky" scroll head={['Test', 'Environment', 'Class', 'Score', 'Flaky runs', 'Last flaky run', 'Trend', 'Quarantine']}>
              {view.rows.map((row) => (
                <TestRow project={project} row={row} view={view} environments={environments} />
              ))}
            </Table>
            {view.total > view.rows.length ? (
              <p class="muted">
                The first {view.rows.length} of {view.total}: narrow the search to see the others.
              </p>
            ) : null}
          </>
        )}
        <EventsSection project={project} view={view} environments={environments} />
      </>
    ),
  });
}
