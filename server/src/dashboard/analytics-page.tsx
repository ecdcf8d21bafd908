import type { DailyRunRow, DayRun, TestCaseMetricsRow } from '../analytics/index.ts';
import type { Project } from '../projects/index.ts';
import { TrendFigure } from './components/trend.tsx';
import { STATE_COLOURS } from '../runs/index.ts';
import { DAY_CHOICES, Field, Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table } from './components/table.tsx';

export interface AnalyticsView {
  days: string[];
  windowDays: number;
  environmentId: number;
  environments: { id: number; name: string }[];
  runs: DailyRunRow[];
  testCounts: { day: string; test_count: number }[];
  flakiest: TestCaseMetricsRow[];
  failing: TestCaseMetricsRow[];
  /** Each day's last ended run: what the day's point links to. */
  dayRuns: Map<string, DayRun>;
}

const rate = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`);

function Ranking(props: { caption: string; rows: TestCaseMetricsRow[]; count: (row: TestCaseMetricsRow) => number }) {
  const { rows, count } = props;
  return (
    <>
      <h2>{props.caption}</h2>
      {rows.length === 0 ? (
        <Empty>None in this window.</Empty>
      ) : (
        <Table head={['Test', 'Rate', 'Runs']}>
          {rows.map((row) => (
            <tr>
              <td>
                {row.test_name}
                <div class="muted">
                  {row.file_path} · {row.project_name}
                </div>
              </td>
              <td>{rate(count(row), row.total_runs)}</td>
              <td>
                {count(row)} of {row.total_runs}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}

export function analyticsPage(viewer: Viewer, project: Project, view: AnalyticsView): string {
  const byDay = new Map(view.runs.map((row) => [row.day, row]));
  const counts = new Map(view.testCounts.map((row) => [row.day, row.test_count]));
  const runOf = (day: string) => {
    const run = view.dayRuns.get(day);
    return run ? { href: `/projects/${project.id}/runs/${run.id}`, name: `last run #${run.number}` } : { href: null, name: 'no run' };
  };
  const runPoints = view.days.map((day) => {
    const row = byDay.get(day);
    const passRate = row && row.total_tests > 0 ? (row.passed_tests / row.total_tests) * 100 : null;
    const other = (row?.error_runs ?? 0) + (row?.cancelled_runs ?? 0);
    const run = runOf(day);
    const text = row
      ? `${day}: ${row.run_count} run${row.run_count === 1 ? '' : 's'} (${row.passed_runs} passed, ${row.failed_runs} failed, ${other} other), ${passRate === null ? 'no test' : `${passRate.toFixed(1)}% of tests passed`}; ${run.name}`
      : `${day}: no run`;
    return {
      x: day,
      bars: [
        { value: row?.passed_runs ?? 0, colour: STATE_COLOURS.passed as string, label: 'passed' },
        { value: row?.failed_runs ?? 0, colour: STATE_COLOURS.failed as string, label: 'failed' },
        { value: other, colour: '#8c959f', label: 'error or cancelled' },
      ],
      line: passRate,
      text,
      href: row ? run.href : null,
    };
  });
  const countPoints = view.days.map((day) => {
    const count = counts.get(day) ?? null;
    const run = runOf(day);
    return {
      x: day,
      bars: [],
      line: count,
      text: count === null ? `${day}: no test run` : `${day}: ${count} tests run; ${run.name}`,
      href: count === null ? null : run.href,
    };
  });
  const totals = view.runs.reduce((sum, row) => ({ runs: sum.runs + row.run_count, passed: sum.passed + row.passed_runs }), { runs: 0, passed: 0 });
  const environments = [{ id: 0, name: 'all environments' }, ...view.environments].map((env) => [env.id, env.name] as const);
  return renderPage({
    title: `Analytics · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Analytics of {project.name}</h1>
        <form class="filters" method="get" aria-label="Window">
          <Field label="Environment">
            <select name="environment_id">
              <Options choices={environments} value={view.environmentId} />
            </select>
          </Field>
          <Field label="Days">
            <select name="days">
              <Options choices={DAY_CHOICES} value={view.windowDays} />
            </select>
          </Field>
          <button type="submit">Show</button>
        </form>
        <p>
          <a href={`/projects/${project.id}/digest${view.environmentId ? `?environment_id=${view.environmentId}` : ''}`}>This week's digest</a>: what turned
          broken, flaky or slower, and the most failing and slowest tests.
        </p>
        <p>
          {totals.runs} runs, {rate(totals.passed, totals.runs)} of them passed, over the last {view.windowDays} days.
        </p>
        <h2>Runs a day and the share of tests that passed</h2>
        <TrendFigure
          chart={{
            label: `Runs a day over ${view.windowDays} days (bars: passed, failed, other) and the daily pass rate of tests (line)`,
            barUnit: 'runs',
            line: { kind: 'rate', max: 100, unit: '%' },
            points: runPoints,
          }}
        />
        <h2>Tests run a day</h2>
        <TrendFigure chart={{ label: `Tests run a day over ${view.windowDays} days`, line: { kind: 'line', unit: '' }, points: countPoints }} />
        <Ranking caption="Flakiest tests" rows={view.flakiest} count={(row) => row.flaky_count} />
        <Ranking caption="Most failing tests" rows={view.failing} count={(row) => row.fail_count} />
      </>
    ),
  });
}
