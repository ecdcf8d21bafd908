import type { Sql, Tx } from '../db.ts';
import { TERMINAL_STATES } from '../states.ts';
import { writeSnapshot } from './snapshot.ts';


/**
 * Rebuilds a project's rollups from its runs and raw results in a few set-wise statements: the
 * rows `rollupRun` leaves run by run (test/analytics.test.ts holds the two equal), for results
 * loaded in bulk or rollups to recompute. Rows are written in day order, as runs write them: the
 * analytics read a day's rows together, and scattered they cost a page each. One transaction: the
 * rollup tables are locked against writers (runs ending meanwhile wait) and the project's rows
 * replaced as one.
 */
export function rebuildRollups(sql: Sql, projectId: number): Promise<void> {
  return sql.begin((tx) => rebuildInTransaction(tx, projectId));
}

async function rebuildInTransaction(sql: Tx, projectId: number): Promise<void> {
  // Its grouping sorts or hashes millions of rows: in the default 4 MB they spill to disk.
  await sql`set local work_mem = '256MB'`;
  await sql`lock table daily_run_stats, daily_test_counts, test_case_cumulative in exclusive mode`;
  for (const table of ['test_case_cumulative', 'daily_test_counts', 'daily_run_stats']) {
    await sql`delete from ${sql(table)} where project_id = ${projectId}`;
  }
  await rebuildRunStats(sql, projectId);
  await rebuildTestStats(sql, projectId);
  // The next statements join the rows just written: without fresh statistics the planner takes
  // those tables for tiny and nests loops over millions of rows.
  await sql`analyze daily_run_stats, daily_test_stats`;
  await rebuildTestCounts(sql, projectId);
  await rebuildCumulative(sql, projectId);
}

/** Each ended run counts on the day it started (UTC), in its environment and the project's (0). */
async function rebuildRunStats(sql: Tx, projectId: number): Promise<void> {
  await sql`
    insert into daily_run_stats (project_id, environment_id, day, run_count, passed_runs, failed_runs, error_runs,
                                 cancelled_runs, rerun_count, total_tests, passed_tests, failed_tests,
                                 failed_tests_after_snooze, flaky_tests)
    select ${projectId}, scope.environment_id, (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date,
           count(*), count(*) filter (where r.state = 'passed'), count(*) filter (where r.state = 'failed'),
           count(*) filter (where r.state = 'error'), count(*) filter (where r.state = 'cancelled'),
           count(*) filter (where r.rerun_source_id is not null), sum(r.total_count), sum(r.success_count),
           sum(r.failed_count), sum(r.failed_count - r.snoozed_count), sum(r.flaky_count)
    from test_runs r cross join lateral (values (r.environment_id), (0)) as scope(environment_id)
    where r.project_id = ${projectId} and r.state in ${sql([...TERMINAL_STATES])}
    group by 2, 3`;
}

/**
 * Each test's counts per day, per environment first (one pass over the results), then the
 * project's from those rows: in a table of the transaction's own, from which the test counts and
 * the running totals are built.
 */
async function rebuildTestStats(sql: Tx, projectId: number): Promise<void> {
  await sql`
    create temporary table daily_test_stats (
      project_id integer not null, environment_id integer not null, day date not null, test_case_id text collate "C" not null,
      total_runs integer not null, pass_count integer not null, fail_count integer not null, flaky_count integer not null,
      skip_count integer not null, last_run_at timestamptz, primary key (project_id, environment_id, day, test_case_id)
    ) on commit drop`;
  await sql`
    insert into daily_test_stats (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                  flaky_count, skip_count, last_run_at)
    select ${projectId}, r.environment_id, r.day, t.test_case_id,
           count(*) filter (where t.outcome <> 'skipped'), count(*) filter (where t.outcome = 'passed'),
           count(*) filter (where t.outcome = 'failed'), count(*) filter (where t.outcome = 'flaky'),
           count(*) filter (where t.outcome = 'skipped'), max(r.ended_at)
    from (select id, environment_id, (coalesce(run_started_at, created_at) at time zone 'UTC')::date as day,
                 coalesce(run_ended_at, created_at) as ended_at
          from test_runs where project_id = ${projectId} and state in ${sql([...TERMINAL_STATES])}) r
    join test_results t on t.test_run_id = r.id and t.is_final
    group by r.environment_id, r.day, t.test_case_id
    order by r.environment_id, r.day, t.test_case_id`;
  await sql`
    insert into daily_test_stats (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                  flaky_count, skip_count, last_run_at)
    select project_id, 0, day, test_case_id, sum(total_runs), sum(pass_count), sum(fail_count), sum(flaky_count),
           sum(skip_count), max(last_run_at)
    from daily_test_stats
    where project_id = ${projectId} and environment_id <> 0
    group by project_id, day, test_case_id
    order by day, test_case_id`;
}

/** A count for every day with a run, zero when every test of the day was skipped. */
async function rebuildTestCounts(sql: Tx, projectId: number): Promise<void> {
  await sql`
    insert into daily_test_counts (project_id, environment_id, day, test_count)
    select d.project_id, d.environment_id, d.day, coalesce(s.test_count, 0)
    from daily_run_stats d
    left join (select environment_id, day, count(*)::int as test_count from daily_test_stats
               where project_id = ${projectId} and total_runs > 0 group by environment_id, day) s
      on s.environment_id = d.environment_id and s.day = d.day
    where d.project_id = ${projectId}`;
}

/**
 * A snapshot on every day with a run in the scope, for every test seen on or before it: the day
 * before's snapshot plus the day's counts, day after day, as runs ending live carry them. One
 * window over every scope's days sorts all the snapshots' rows at once (7 million for 20,000 tests
 * over 90 days, twice: by test for the sums, by day to write them); day by day, each statement
 * joins two days' rows.
 */
async function rebuildCumulative(sql: Tx, projectId: number): Promise<void> {
  const scopes = await sql<{ environment_id: number; days: string[] }[]>`
    select environment_id, array_agg(day::text order by day) as days from daily_run_stats
    where project_id = ${projectId} group by environment_id order by environment_id`;
  for (const { environment_id: environmentId, days } of scopes) {
    let previous: string | null = null;
    for (const day of days) {
      await addDayToCumulative(sql, projectId, environmentId, day, previous);
      previous = day;
    }
  }
}

async function addDayToCumulative(sql: Tx, projectId: number, environmentId: number, day: string, previous: string | null): Promise<void> {
  const counts = sql`
    select test_case_id, total_runs, pass_count, fail_count, flaky_count, skip_count, last_run_at
    from daily_test_stats
    where project_id = ${projectId} and environment_id = ${environmentId} and day = ${day}::date`;
  await writeSnapshot(sql, { projectId, environmentId }, day, sql`${previous}::date`, counts);
}
