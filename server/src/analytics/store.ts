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
}

export interface TestCaseMetricsRow {
  test_case_id: string;
  test_name: string;
  file_path: string;
  project_name: string;
  tags: string[];
  last_run_at: Date | null;
  total_runs: number;
  pass_count: number;
  fail_count: number;
  flaky_count: number;
}

const ORDER = {
  fail_rate: (sql: Tx) => sql`a.fail_count::float8 / nullif(a.total_runs, 0)`,
  flaky_rate: (sql: Tx) => sql`a.flaky_count::float8 / nullif(a.total_runs, 0)`,
  last_run: (sql: Tx) => sql`a.last_run_at`,
};

function caseFilter(sql: Tx, filter: TestCaseFilter) {
  if (filter.testCaseId) return sql``;
  return sql`
    ${filter.tags.length > 0 ? sql`and tc.tags && ${filter.tags}::text[]` : sql``}
    ${filter.search ? sql`and (lower(tc.name) like ${filter.search} or lower(tc.file_path) like ${filter.search})` : sql``}`;
}

/** Each test's executions in the window, summed from the daily rollups, with its inventory entry. */
export async function testCaseMetrics(
  sql: Tx,
  projectId: number,
  environmentId: number,
  window: { from: string; to: string },
  filter: TestCaseFilter,
  order: { by: keyof typeof ORDER; direction: 'asc' | 'desc'; limit: number },
): Promise<{ rows: TestCaseMetricsRow[]; withHistory: number }> {
  const aggregated = sql`
    select test_case_id, sum(total_runs)::int as total_runs, sum(pass_count)::int as pass_count,
           sum(fail_count)::int as fail_count, sum(flaky_count)::int as flaky_count, max(last_run_at) as last_run_at
    from daily_test_stats
    where project_id = ${projectId} and environment_id = ${environmentId} and day between ${window.from}::date and ${window.to}::date
      ${filter.testCaseId ? sql`and test_case_id = ${filter.testCaseId}` : sql``}
    group by test_case_id`;
  const rows = await sql<(TestCaseMetricsRow & { with_history: number })[]>`
    with a as (${aggregated})
    select a.test_case_id, tc.name as test_name, tc.file_path, tc.runner_project as project_name, tc.tags, a.last_run_at,
           a.total_runs, a.pass_count, a.fail_count, a.flaky_count, count(*) over ()::int as with_history
    from a join test_cases tc on tc.project_id = ${projectId} and tc.id = a.test_case_id
    where true ${caseFilter(sql, filter)}
    order by ${ORDER[order.by](sql)} ${order.direction === 'asc' ? sql`asc nulls first` : sql`desc nulls last`}, a.test_case_id
    limit ${filter.testCaseId ? 1 : order.limit}`;
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
  environment_id: number;
  run_at: Date;
  started_at: Date | null;
  outcome: 'passed' | 'failed' | 'flaky' | 'skipped';
  total_duration: number | null;
  retry: number;
}

/** The newest `limit` final results of each test in the window, from the history index. */
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
    select h.* from unnest(${testCaseIds}::text[]) as ids(id)
    cross join lateral (
      select r.test_case_id, r.test_run_id, t.environment_id, coalesce(t.run_ended_at, t.created_at) as run_at, r.started_at,
             r.outcome, r.total_duration, r.retry
      from test_results r join test_runs t on t.id = r.test_run_id
      where r.test_case_id = ids.id collate "C" and r.is_final and t.project_id = ${projectId}
        ${environmentId ? sql`and t.environment_id = ${environmentId}` : sql``}
        and (coalesce(t.run_started_at, t.created_at) at time zone 'UTC')::date between ${window.from}::date and ${window.to}::date
      order by r.test_run_id desc
      limit ${limit}
    ) h`;
}
