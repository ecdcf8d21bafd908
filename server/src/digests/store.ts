import type { Tx } from '../db.ts';

// The digest's own reads: which tests turned flaky or broken in a period, and the project's open
// tracker issues. Everything else in a digest comes from the features that keep it (analytics'
// rollups, flakiness, duration shifts).

export interface TurnedTest {
  test_case_id: string;
  title: string;
  file_path: string;
  /** The run where it started: its first flaky run in the period, or the first failure of its streak. */
  run_id: number;
  run_number: number;
}

/**
 * Tests flaky in a run of the period that had no flaky run in the look-back before it (per day of
 * the flakiness rollup, UTC days).
 */
export async function turnedFlaky(
  sql: Tx,
  projectId: number,
  environmentId: number,
  period: { from: string; to: string; lookBackFrom: string },
): Promise<TurnedTest[]> {
  return sql<TurnedTest[]>`
    with now_flaky as (
      select test_case_id, min(day) as first_day from daily_test_flakiness
      where project_id = ${projectId} and environment_id = ${environmentId} and day between ${period.from}::date and ${period.to}::date and flaky_runs > 0
      group by test_case_id
    ),
    before as (
      select distinct test_case_id from daily_test_flakiness
      where project_id = ${projectId} and environment_id = ${environmentId} and day >= ${period.lookBackFrom}::date and day < ${period.from}::date and flaky_runs > 0
    ),
    turned as (select n.test_case_id from now_flaky n where not exists (select 1 from before b where b.test_case_id = n.test_case_id))
    select t.test_case_id, coalesce(tc.name, t.test_case_id) as title, coalesce(tc.file_path, '') as file_path, first_run.id as run_id, first_run.number as run_number
    from turned t
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = t.test_case_id
    cross join lateral (
      select r.id, r.number from test_runs r join test_results x on x.test_run_id = r.id and x.test_case_id = t.test_case_id and x.is_final and x.outcome = 'flaky'
      where r.project_id = ${projectId} and r.environment_id = ${environmentId}
        and (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date between ${period.from}::date and ${period.to}::date
      order by r.id limit 1
    ) first_run
    order by first_run.id, t.test_case_id`;
}

/**
 * Tests that fail in the environment's latest ended run and in every run since their streak began,
 * where the streak began in the period after a pass (a test that never passed did not turn). Only
 * the environment's newest 200 runs are read: each failing test's results are probes of the
 * results' key (run, test), never a scan of a test's whole history.
 */
export async function turnedBroken(sql: Tx, projectId: number, environmentId: number, period: { from: string; to: string }): Promise<TurnedTest[]> {
  return sql<TurnedTest[]>`
    with env_runs as materialized (
      select id, number, (coalesce(run_started_at, created_at) at time zone 'UTC')::date as day from test_runs
      where project_id = ${projectId} and environment_id = ${environmentId} and run_ended_at is not null
      order by id desc limit 200
    ),
    failing as (
      select x.test_case_id from test_results x
      where x.test_run_id = (select max(id) from env_runs) and x.is_final and x.outcome = 'failed'
    ),
    history as (
      select f.test_case_id, x.test_run_id, x.outcome from failing f
      join test_results x on x.test_case_id = f.test_case_id and x.is_final
       and x.test_run_id = any((select coalesce(array_agg(id), '{}') from env_runs)::int[])
    ),
    streaks as (
      select test_case_id, max(test_run_id) filter (where outcome in ('passed', 'flaky')) as last_pass from history group by test_case_id
    ),
    first_fail as (
      select h.test_case_id, min(h.test_run_id) as run_id from history h join streaks s on s.test_case_id = h.test_case_id
      where s.last_pass is not null and h.test_run_id > s.last_pass and h.outcome = 'failed'
      group by h.test_case_id
    )
    select f.test_case_id, coalesce(tc.name, f.test_case_id) as title, coalesce(tc.file_path, '') as file_path, r.id as run_id, r.number as run_number
    from first_fail f join env_runs r on r.id = f.run_id
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = f.test_case_id
    where r.day between ${period.from}::date and ${period.to}::date
    order by r.id, f.test_case_id`;
}

export interface OpenIssue {
  subject_kind: 'failure_group' | 'test';
  subject_id: string;
  title: string;
  tracker: 'github' | 'gitlab' | 'jira' | 'linear';
  issue_key: string;
  issue_url: string | null;
}

/**
 * The project's tracker issues open as last read or left, of the subjects named first (the tests
 * the digest lists), then the newest links; at most `limit`, and how many there are.
 */
export async function openIssues(sql: Tx, projectId: number, named: string[], limit: number): Promise<{ rows: OpenIssue[]; total: number }> {
  const rows = await sql<(OpenIssue & { total: number })[]>`
    select l.subject_kind, l.subject_id, coalesce(tc.name, fg.title, l.subject_id) as title, l.tracker, l.issue_key, l.issue_url,
           count(*) over ()::int as total
    from tracker_links l
    left join test_cases tc on l.subject_kind = 'test' and tc.project_id = l.project_id and tc.id = l.subject_id
    left join failure_groups fg on l.subject_kind = 'failure_group' and fg.project_id = l.project_id and fg.id = l.subject_id
    where l.project_id = ${projectId} and l.issue_state = 'open' and l.issue_key is not null
    order by (l.subject_kind = 'test' and l.subject_id = any(${named}::text[])) desc, l.id desc
    limit ${limit}`;
  return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total ?? 0 };
}

export interface FlakierTest {
  test_case_id: string;
  title: string;
  file_path: string;
  flaky_runs: number;
  runs_counted: number;
  previous_flaky_runs: number;
  previous_runs_counted: number;
}

/**
 * Tests flaky in a larger share of the period's counted runs than of the look-back's before it
 * (the days from `lookBackFrom` to the period's first, exclusive), the largest rise of that share
 * first; a test with no counted run in the look-back rose from none. Per day of the flakiness
 * rollup (UTC days).
 */
export async function flakierTests(
  sql: Tx,
  projectId: number,
  environmentId: number,
  period: { from: string; to: string; lookBackFrom: string },
  limit: number,
): Promise<FlakierTest[]> {
  return sql<FlakierTest[]>`
    with sums as (
      select test_case_id,
        coalesce(sum(flaky_runs) filter (where day >= ${period.from}::date), 0)::int as flaky_runs,
        coalesce(sum(counted_runs) filter (where day >= ${period.from}::date), 0)::int as runs_counted,
        coalesce(sum(flaky_runs) filter (where day < ${period.from}::date), 0)::int as previous_flaky_runs,
        coalesce(sum(counted_runs) filter (where day < ${period.from}::date), 0)::int as previous_runs_counted
      from daily_test_flakiness
      where project_id = ${projectId} and environment_id = ${environmentId} and day between ${period.lookBackFrom}::date and ${period.to}::date
      group by test_case_id
    ),
    rates as (
      select *, flaky_runs::float8 / runs_counted - coalesce(previous_flaky_runs::float8 / nullif(previous_runs_counted, 0), 0) as rise
      from sums where flaky_runs > 0 and runs_counted > 0
    )
    select r.test_case_id, coalesce(tc.name, r.test_case_id) as title, coalesce(tc.file_path, '') as file_path,
           r.flaky_runs, r.runs_counted, r.previous_flaky_runs, r.previous_runs_counted
    from rates r
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = r.test_case_id
    where r.rise > 0
    order by r.rise desc, r.flaky_runs desc, r.test_case_id
    limit ${limit}`;
}
