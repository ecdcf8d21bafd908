import { DAY_MS } from '../context.ts';
import type { Tx } from '../db.ts';

export interface DailyRunRow {
  day: string;
  run_count: number;
  passed_runs: number;
  failed_runs: number;
  error_runs: number;
  cancelled_runs: number;
  rerun_count: number;
  total_tests: number;
  passed_tests: number;
  failed_tests: number;
  failed_tests_after_snooze: number;
  flaky_tests: number;
}

/** `environmentId` 0 reads the project's rollups over every environment. */
export async function dailyRuns(sql: Tx, projectId: number, environmentId: number, from: string, to: string): Promise<DailyRunRow[]> {
  return sql<DailyRunRow[]>`
    select day::text as day, run_count, passed_runs, failed_runs, error_runs, cancelled_runs, rerun_count, total_tests,
           passed_tests, failed_tests, failed_tests_after_snooze, flaky_tests
    from daily_run_stats
    where project_id = ${projectId} and environment_id = ${environmentId} and day between ${from}::date and ${to}::date`;
}

export async function dailyTestCounts(sql: Tx, projectId: number, environmentId: number, from: string, to: string) {
  return sql<{ day: string; test_count: number }[]>`
    select day::text as day, test_count from daily_test_counts
    where project_id = ${projectId} and environment_id = ${environmentId} and day between ${from}::date and ${to}::date`;
}

export interface TestCaseFilter {
  testCaseId?: string;
  tags: string[];
  search: string | null;
  /** The tests one owner owns (`@org/team`). */
  owner?: string | null;
}

export interface TestCaseMetricsRow {
  test_case_id: string;
  test_name: string;
  file_path: string;
  project_name: string;
  tags: string[];
  owners: string[];
  last_run_at: Date | null;
  total_runs: number;
  pass_count: number;
  fail_count: number;
  flaky_count: number;
  /** The mean duration of its executions in the window, ms. */
  mean_duration: number | null;
}

const ORDER = {
  fail_rate: (sql: Tx) => sql`a.fail_count::float8 / nullif(a.total_runs, 0)`,
  flaky_rate: (sql: Tx) => sql`a.flaky_count::float8 / nullif(a.total_runs, 0)`,
  last_run: (sql: Tx) => sql`a.last_run_at`,
  duration: (sql: Tx) => sql`a.duration_sum::float8 / nullif(a.total_runs, 0)`,
};

/** The window's mean duration, whole ms. */
const MEAN_DURATION = 'round(a.duration_sum::numeric / nullif(a.total_runs, 0))::float8';

function caseFilter(sql: Tx, filter: TestCaseFilter) {
  if (filter.testCaseId) return sql``;
  return sql`
    ${filter.tags.length > 0 ? sql`and tc.tags && ${filter.tags}::text[]` : sql``}
    ${filter.search ? sql`and (lower(tc.name) like ${filter.search} or lower(tc.file_path) like ${filter.search})` : sql``}
    ${filter.owner ? sql`and tc.owners @> ${[filter.owner]}::text[]` : sql``}`;
}

/** The latest snapshot day of the running totals on or before `day`, or null. */
async function snapshotDay(sql: Tx, projectId: number, environmentId: number, day: string): Promise<string | null> {
  const [row] = await sql<{ day: string | null }[]>`
    select max(day)::text as day from test_case_cumulative
    where project_id = ${projectId} and environment_id = ${environmentId} and day <= ${day}::date`;
  return row?.day ?? null;
}

function dayBefore(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
}

/**
 * Each test's executions in the window: its running totals at the window's end less those of the
 * day before it starts, with its inventory entry. Tests with no execution in the window are left out.
 */
export async function testCaseMetrics(
  sql: Tx,
  projectId: number,
  environmentId: number,
  window: { from: string; to: string },
  filter: TestCaseFilter,
  order: { by: keyof typeof ORDER; direction: 'asc' | 'desc'; limit: number },
): Promise<{ rows: TestCaseMetricsRow[]; withHistory: number }> {
  const [endDay, beforeDay] = await Promise.all([
    snapshotDay(sql, projectId, environmentId, window.to),
    snapshotDay(sql, projectId, environmentId, dayBefore(window.from)),
  ]);
  if (!endDay || endDay === beforeDay) return { rows: [], withHistory: 0 };
  const totals = sql`
    select h.test_case_id,
           h.total_runs - coalesce(l.total_runs, 0) as total_runs,
           h.pass_count - coalesce(l.pass_count, 0) as pass_count,
           h.fail_count - coalesce(l.fail_count, 0) as fail_count,
           h.flaky_count - coalesce(l.flaky_count, 0) as flaky_count,
           h.duration_sum - coalesce(l.duration_sum, 0) as duration_sum,
           h.last_run_at
    from test_case_cumulative h
    left join test_case_cumulative l
      on l.project_id = h.project_id and l.environment_id = h.environment_id and l.day = ${beforeDay}::date
     and l.test_case_id = h.test_case_id
    where h.project_id = ${projectId} and h.environment_id = ${environmentId} and h.day = ${endDay}::date
      ${filter.testCaseId ? sql`and h.test_case_id = ${filter.testCaseId}` : sql``}
      and h.total_runs + h.skip_count > coalesce(l.total_runs + l.skip_count, 0)`;
  const orderBy = sql`${ORDER[order.by](sql)} ${order.direction === 'asc' ? sql`asc nulls first` : sql`desc nulls last`}, a.test_case_id`;
  const limit = filter.testCaseId ? 1 : order.limit;
  const needsInventory = !filter.testCaseId && (filter.tags.length > 0 || filter.search !== null || Boolean(filter.owner));
  // Without a tag or search filter, the page is chosen from the totals alone; only its rows meet the inventory.
  const rows = needsInventory
    ? await sql<(TestCaseMetricsRow & { with_history: number })[]>`
        with a as (${totals})
        select a.test_case_id, tc.name as test_name, tc.file_path, tc.runner_project as project_name, tc.tags, tc.owners, a.last_run_at,
               a.total_runs, a.pass_count, a.fail_count, a.flaky_count, ${sql.unsafe(MEAN_DURATION)} as mean_duration,
               count(*) over ()::int as with_history
        from a join test_cases tc on tc.project_id = ${projectId} and tc.id = a.test_case_id
        where true ${caseFilter(sql, filter)}
        order by ${orderBy}
        limit ${limit}`
    : await sql<(TestCaseMetricsRow & { with_history: number })[]>`
        with a as (${totals}),
        page as (select a.*, count(*) over ()::int as with_history from a order by ${orderBy} limit ${limit})
        select a.test_case_id, coalesce(tc.name, a.test_case_id) as test_name, coalesce(tc.file_path, '') as file_path,
               coalesce(tc.runner_project, '') as project_name, coalesce(tc.tags, '{}') as tags, coalesce(tc.owners, '{}') as owners, a.last_run_at,
               a.total_runs, a.pass_count, a.fail_count, a.flaky_count, ${sql.unsafe(MEAN_DURATION)} as mean_duration, a.with_history
        from page a left join test_cases tc on tc.project_id = ${projectId} and tc.id = a.test_case_id
        order by ${orderBy}`;
  return { rows, withHistory: rows[0]?.with_history ?? 0 };
}

export async function countTestCases(sql: Tx, projectId: number, filter: TestCaseFilter): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from test_cases tc
    where tc.project_id = ${projectId} ${filter.testCaseId ? sql`and tc.id = ${filter.testCaseId}` : sql`and tc.is_active`} ${caseFilter(sql, filter)}`;
  return row?.n ?? 0;
}

export interface HistoryRow {
  test_case_id: string;
  test_run_id: number;
  /** The run's number in its project: what pages name it by. */
  test_run_number: number;
  environment_id: number;
  run_at: Date;
  started_at: Date | null;
  outcome: 'passed' | 'failed' | 'flaky' | 'skipped';
  total_duration: number | null;
  retry: number;
}

/**
 * The newest `limit` final results of each test in the window. The window's runs come first (a
 * few hundred ids); each test then walks the results' primary key from the newest run down and
 * stops at `limit`, instead of the planner's guess of probing every run. The runs are joined once,
 * after every walk: joined inside, they were scanned again for each test.
 */
export async function testHistory(
  sql: Tx,
  projectId: number,
  environmentId: number,
  testCaseIds: string[],
  window: { from: string; to: string },
  limit: number,
): Promise<HistoryRow[]> {
  if (testCaseIds.length === 0) return [];
  return sql<HistoryRow[]>`
    with window_runs as materialized (
      select id, number, environment_id, coalesce(run_ended_at, created_at) as run_at from test_runs
      where project_id = ${projectId} ${environmentId ? sql`and environment_id = ${environmentId}` : sql``}
        and (coalesce(run_started_at, created_at) at time zone 'UTC')::date between ${window.from}::date and ${window.to}::date
    ),
    history as materialized (
      select h.test_case_id, h.test_run_id, h.started_at, h.outcome, h.total_duration, h.retry
      from unnest(${testCaseIds}::text[]) as ids(id)
      cross join lateral (
        select r.test_case_id, r.test_run_id, r.started_at, r.outcome, r.total_duration, r.retry
        from test_results r
        where r.test_case_id = ids.id collate "C" and r.is_final
          and r.test_run_id = any((select coalesce(array_agg(w.id), '{}') from window_runs w)::int[])
        order by r.test_run_id desc
        limit ${limit}
      ) h
    )
    select h.test_case_id, h.test_run_id, w.number as test_run_number, w.environment_id, w.run_at, h.started_at, h.outcome, h.total_duration, h.retry
    from history h join window_runs w on w.id = h.test_run_id
    order by h.test_case_id, h.test_run_id desc`;
}

/**
 * Each test's mean duration (ms) in the environment over its history, from the latest snapshot;
 * tests never run there are missing.
 */
export async function meanDurations(sql: Tx, projectId: number, environmentId: number, testIds: string[]): Promise<Map<string, number>> {
  const rows = await sql<{ test_case_id: string; mean: number }[]>`
    select test_case_id, round(duration_sum::numeric / total_runs)::float8 as mean from test_case_cumulative
    where project_id = ${projectId} and environment_id = ${environmentId} and total_runs > 0 and test_case_id = any(${testIds}::text[])
      and day = (select max(day) from test_case_cumulative where project_id = ${projectId} and environment_id = ${environmentId})`;
  return new Map(rows.map((row) => [row.test_case_id, row.mean]));
}

export async function testsSeenIn(sql: Tx, projectId: number, environmentId: number): Promise<Set<string>> {
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_case_cumulative
    where project_id = ${projectId} and environment_id = ${environmentId}
      and day = (select max(day) from test_case_cumulative where project_id = ${projectId} and environment_id = ${environmentId})`;
  return new Set(rows.map((row) => row.test_case_id));
}

/** A day's last ended run in an environment: what a point of a daily trend links to. */
export interface DayRun {
  environment_id: number;
  day: string;
  id: number;
  number: number;
}

/**
 * The last ended run of each day (UTC, as the rollups count days) and environment, from `from` to
 * `to` (YYYY-MM-DD, both included); `environmentId` 0 reads every environment.
 */
export async function lastRunsByDay(sql: Tx, projectId: number, environmentId: number, from: string, to: string): Promise<DayRun[]> {
  return sql<DayRun[]>`
    select distinct on (environment_id, day) environment_id, day::text as day, id, number from (
      select environment_id, (coalesce(run_started_at, created_at) at time zone 'UTC')::date as day, id, number
      from test_runs
      where project_id = ${projectId} and run_ended_at is not null
        and environment_id = any(${environmentId === 0 ? sql`array(select id from environments where project_id = ${projectId})` : sql`array[${environmentId}]::int[]`})
        -- A run ends after it starts: the window's ends by the index on (environment, end), then its starts.
        and run_ended_at >= ${from}::date at time zone 'UTC'
        and coalesce(run_started_at, created_at) >= ${from}::date at time zone 'UTC'
        and coalesce(run_started_at, created_at) < (${to}::date + 1) at time zone 'UTC'
    ) r
    order by environment_id, day, id desc`;
}

/** Of `runs`, each day's last over every environment. */
export function lastRunOfDay(runs: DayRun[]): Map<string, DayRun> {
  const byDay = new Map<string, DayRun>();
  for (const run of runs) if ((byDay.get(run.day)?.id ?? 0) < run.id) byDay.set(run.day, run);
  return byDay;
}
