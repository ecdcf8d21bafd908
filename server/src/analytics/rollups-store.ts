import type postgres from 'postgres';
import { ADVISORY_LOCK, lockAdvisory, type Sql, type Tx } from '../db.ts';
import { TERMINAL_STATES } from '../states.ts';

// The one module that writes the rollup tables (daily_run_stats, daily_test_counts,
// test_case_cumulative): run by run right after runs end (rollupRun, by the job that empties the
// rollup queue), or all of a project's at once from its results (replaceRollups, in the rebuild of
// rollups.ts), both through writeSnapshot; and `rollup_queue`, the runs that have ended and wait
// for their rollup.

/**
 * Adds an ended run to the daily rollups of its day (the day it started, UTC): its environment's
 * and the project's (environment 0). A project's rollups are written one run at a time: a late run
 * moves the snapshots of later days, which another run may be writing.
 */
export async function rollupRun(sql: Tx, runId: number): Promise<void> {
  const [run] = await sql<{ project_id: number; environment_id: number; day: string }[]>`
    select project_id, environment_id, (coalesce(run_started_at, created_at) at time zone 'UTC')::date::text as day
    from test_runs where id = ${runId}`;
  if (!run) return;
  await lockAdvisory(sql, ADVISORY_LOCK.rollups, run.project_id);
  await sql`
    insert into daily_run_stats as d (project_id, environment_id, day, run_count, passed_runs, failed_runs, error_runs,
                                      cancelled_runs, rerun_count, total_tests, passed_tests, failed_tests,
                                      failed_tests_after_snooze, flaky_tests)
    select r.project_id, scope.environment_id, ${run.day}::date, 1, (r.state = 'passed')::int, (r.state = 'failed')::int,
           (r.state = 'error')::int, (r.state = 'cancelled')::int, (r.rerun_source_id is not null)::int, r.total_count,
           r.success_count, r.failed_count, r.failed_count - r.snoozed_count, r.flaky_count
    from test_runs r cross join (values (${run.environment_id}::int), (0)) as scope(environment_id)
    where r.id = ${runId}
    on conflict (project_id, environment_id, day) do update set
      run_count = d.run_count + 1,
      passed_runs = d.passed_runs + excluded.passed_runs,
      failed_runs = d.failed_runs + excluded.failed_runs,
      error_runs = d.error_runs + excluded.error_runs,
      cancelled_runs = d.cancelled_runs + excluded.cancelled_runs,
      rerun_count = d.rerun_count + excluded.rerun_count,
      total_tests = d.total_tests + excluded.total_tests,
      passed_tests = d.passed_tests + excluded.passed_tests,
      failed_tests = d.failed_tests + excluded.failed_tests,
      failed_tests_after_snooze = d.failed_tests_after_snooze + excluded.failed_tests_after_snooze,
      flaky_tests = d.flaky_tests + excluded.flaky_tests`;
  for (const environmentId of [run.environment_id, 0]) await addToCumulative(sql, runId, run.project_id, environmentId, run.day);
  await sql`
    insert into daily_test_counts as c (project_id, environment_id, day, test_count)
    select ${run.project_id}, scope.environment_id, ${run.day}::date,
           (select count(*)::int from test_case_cumulative s
            where s.project_id = ${run.project_id} and s.environment_id = scope.environment_id and s.day = ${run.day}::date
              and s.day_runs > 0)
    from (values (${run.environment_id}::int), (0)) as scope(environment_id)
    on conflict (project_id, environment_id, day) do update set test_count = excluded.test_count`;
}

/**
 * Adds the run's final results to the running totals of its day and of every later snapshot day
 * (later ones exist only when a run is reported late), and to its day's own runs (`day_runs`,
 * what a day's test count counts). A day's first run writes the day's snapshot in one pass: the
 * latest earlier day's totals full-joined with the run's results. The others upsert on the whole
 * key. Neither can nest a loop over a day's snapshot per test, so completion stays linear in the
 * run's size and the project's test count, whatever statistics a freshly written run has.
 */
async function addToCumulative(sql: Tx, runId: number, projectId: number, environmentId: number, day: string): Promise<void> {
  const [existing] = await sql`
    select 1 from test_case_cumulative where project_id = ${projectId} and environment_id = ${environmentId} and day = ${day}::date limit 1`;
  if (!existing) {
    const previousDay = sql`(select max(day) from test_case_cumulative
                             where project_id = ${projectId} and environment_id = ${environmentId} and day < ${day}::date)`;
    await writeSnapshot(sql, { projectId, environmentId }, day, previousDay, runDeltas(sql, runId));
  }
  await sql`
    insert into test_case_cumulative as c (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                           flaky_count, skip_count, last_run_at, day_runs, duration_sum)
    select ${projectId}, ${environmentId}, d.day, r.test_case_id, r.total_runs, r.pass_count, r.fail_count, r.flaky_count,
           r.skip_count, r.last_run_at, case when d.day = ${day}::date then r.total_runs else 0 end, r.duration_sum
    from (${runDeltas(sql, runId)}) r
    cross join (select day from test_case_cumulative
                where project_id = ${projectId} and environment_id = ${environmentId} and day ${existing ? sql`>=` : sql`>`} ${day}::date
                group by day) d
    on conflict (project_id, environment_id, day, test_case_id) do update set
      total_runs = c.total_runs + excluded.total_runs,
      pass_count = c.pass_count + excluded.pass_count,
      fail_count = c.fail_count + excluded.fail_count,
      flaky_count = c.flaky_count + excluded.flaky_count,
      skip_count = c.skip_count + excluded.skip_count,
      last_run_at = greatest(c.last_run_at, excluded.last_run_at),
      day_runs = c.day_runs + excluded.day_runs,
      duration_sum = c.duration_sum + excluded.duration_sum`;
}

/** What one run adds to each of its tests' totals. */
function runDeltas(sql: Tx, runId: number) {
  return sql`
    select t.test_case_id, (t.outcome <> 'skipped')::int as total_runs, (t.outcome = 'passed')::int as pass_count,
           (t.outcome = 'failed')::int as fail_count, (t.outcome = 'flaky')::int as flaky_count,
           (t.outcome = 'skipped')::int as skip_count, coalesce(r.run_ended_at, r.created_at) as last_run_at,
           case when t.outcome <> 'skipped' then coalesce(t.total_duration, t.duration, 0) else 0 end::bigint as duration_sum
    from test_results t join test_runs r on r.id = t.test_run_id
    where t.test_run_id = ${runId} and t.is_final`;
}

/**
 * Replaces a project's rollups after `horizon` (a day; null: every day) from its runs and raw
 * results in a few set-wise statements: the rows `rollupRun` leaves run by run, for results loaded
 * in bulk or rollups to recompute. Rows are written in day order, as runs write them: the
 * analytics read a day's rows together, and scattered they cost a page each. The rollup tables are
 * locked against writers (runs ending meanwhile wait) until the caller's transaction ends.
 */
export async function replaceRollups(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  // Its grouping sorts or hashes millions of rows: in the default 4 MB they spill to disk.
  await sql`set local work_mem = '256MB'`;
  await sql`lock table daily_run_stats, daily_test_counts, test_case_cumulative in exclusive mode`;
  for (const table of ['test_case_cumulative', 'daily_test_counts', 'daily_run_stats']) {
    await sql`delete from ${sql(table)} where project_id = ${projectId} and ${after(sql, 'day', horizon)}`;
  }
  await rebuildRunStats(sql, projectId, horizon);
  await rebuildTestStats(sql, projectId, horizon);
  // The next statements join the rows just written: without fresh statistics the planner takes
  // those tables for tiny and nests loops over millions of rows.
  await sql`analyze daily_run_stats, daily_test_stats`;
  await rebuildTestCounts(sql, projectId, horizon);
  await rebuildCumulative(sql, projectId, horizon);
}

/** The last day (UTC) with a run whose results were deleted: null when none was. */
export async function lastDeletedDay(sql: Tx, projectId: number): Promise<string | null> {
  const [row] = await sql<{ day: string | null }[]>`
    select max((coalesce(run_started_at, created_at) at time zone 'UTC')::date)::text as day
    from test_runs where project_id = ${projectId} and details_deleted_at is not null`;
  return row?.day ?? null;
}

/** `column` (a date) is after the horizon; always, without one. */
function after(sql: Tx, column: string, horizon: string | null) {
  return horizon === null ? sql`true` : sql`${sql.unsafe(column)} > ${horizon}::date`;
}

/** The day of run `alias` (the day it started, UTC) is after the horizon; always, without one. */
function runAfter(sql: Tx, alias: string, horizon: string | null) {
  return after(sql, `(coalesce(${alias}.run_started_at, ${alias}.created_at) at time zone 'UTC')::date`, horizon);
}

/** Each ended run counts on the day it started (UTC), in its environment and the project's (0). */
async function rebuildRunStats(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
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
    where r.project_id = ${projectId} and r.state in ${sql([...TERMINAL_STATES])} and ${runAfter(sql, 'r', horizon)}
    group by 2, 3`;
}

/**
 * Each test's counts per day, per environment first (one pass over the results), then the
 * project's from those rows: in a table of the transaction's own, from which the test counts and
 * the running totals are built.
 */
async function rebuildTestStats(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  await sql`
    create temporary table daily_test_stats (
      project_id integer not null, environment_id integer not null, day date not null, test_case_id text collate "C" not null,
      total_runs integer not null, pass_count integer not null, fail_count integer not null, flaky_count integer not null,
      skip_count integer not null, last_run_at timestamptz, duration_sum bigint not null,
      primary key (project_id, environment_id, day, test_case_id)
    ) on commit drop`;
  await sql`
    insert into daily_test_stats (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                  flaky_count, skip_count, last_run_at, duration_sum)
    select ${projectId}, r.environment_id, r.day, t.test_case_id,
           count(*) filter (where t.outcome <> 'skipped'), count(*) filter (where t.outcome = 'passed'),
           count(*) filter (where t.outcome = 'failed'), count(*) filter (where t.outcome = 'flaky'),
           count(*) filter (where t.outcome = 'skipped'), max(r.ended_at),
           coalesce(sum(coalesce(t.total_duration, t.duration, 0)) filter (where t.outcome <> 'skipped'), 0)
    from (select id, environment_id, (coalesce(run_started_at, created_at) at time zone 'UTC')::date as day,
                 coalesce(run_ended_at, created_at) as ended_at
          from test_runs r where project_id = ${projectId} and state in ${sql([...TERMINAL_STATES])} and ${runAfter(sql, 'r', horizon)}) r
    join test_results t on t.test_run_id = r.id and t.is_final
    group by r.environment_id, r.day, t.test_case_id
    order by r.environment_id, r.day, t.test_case_id`;
  await sql`
    insert into daily_test_stats (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                  flaky_count, skip_count, last_run_at, duration_sum)
    select project_id, 0, day, test_case_id, sum(total_runs), sum(pass_count), sum(fail_count), sum(flaky_count),
           sum(skip_count), max(last_run_at), sum(duration_sum)
    from daily_test_stats
    where project_id = ${projectId} and environment_id <> 0
    group by project_id, day, test_case_id
    order by day, test_case_id`;
}

/** A count for every day with a run, zero when every test of the day was skipped. */
async function rebuildTestCounts(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  await sql`
    insert into daily_test_counts (project_id, environment_id, day, test_count)
    select d.project_id, d.environment_id, d.day, coalesce(s.test_count, 0)
    from daily_run_stats d
    left join (select environment_id, day, count(*)::int as test_count from daily_test_stats
               where project_id = ${projectId} and total_runs > 0 group by environment_id, day) s
      on s.environment_id = d.environment_id and s.day = d.day
    where d.project_id = ${projectId} and ${after(sql, 'd.day', horizon)}`;
}

/**
 * A snapshot on every day with a run in the scope, for every test seen on or before it: the day
 * before's snapshot plus the day's counts, day after day, as runs ending live carry them. One
 * window over every scope's days sorts all the snapshots' rows at once (7 million for 20,000 tests
 * over 90 days, twice: by test for the sums, by day to write them); day by day, each statement
 * joins two days' rows.
 */
async function rebuildCumulative(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  const scopes = await sql<{ environment_id: number; days: string[]; kept: string | null }[]>`
    select environment_id, array_agg(day::text order by day) as days,
           (select max(c.day)::text from test_case_cumulative c
            where c.project_id = ${projectId} and c.environment_id = d.environment_id and not ${after(sql, 'c.day', horizon)}) as kept
    from daily_run_stats d
    where project_id = ${projectId} and ${after(sql, 'day', horizon)} group by environment_id order by environment_id`;
  for (const { environment_id: environmentId, days, kept } of scopes) {
    // The days after the horizon start from the last snapshot kept before it.
    let previous: string | null = kept;
    for (const day of days) {
      await addDayToCumulative(sql, projectId, environmentId, day, previous);
      previous = day;
    }
  }
}

async function addDayToCumulative(sql: Tx, projectId: number, environmentId: number, day: string, previous: string | null): Promise<void> {
  const counts = sql`
    select test_case_id, total_runs, pass_count, fail_count, flaky_count, skip_count, last_run_at, duration_sum
    from daily_test_stats
    where project_id = ${projectId} and environment_id = ${environmentId} and day = ${day}::date`;
  await writeSnapshot(sql, { projectId, environmentId }, day, sql`${previous}::date`, counts);
}

/** A piece of SQL to embed: a day, or a query. */
type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * Writes a scope's snapshot of `day` in one pass, in test order: the totals of the snapshot of
 * `previousDay` (a date, or a query giving one; none: a first snapshot) full-joined with `counts`,
 * a query of the day's own (test_case_id, total_runs, pass_count, fail_count, flaky_count,
 * skip_count, last_run_at, duration_sum). A full join is a hash or merge join, never a loop over a snapshot per
 * test, whatever the statistics of rows written a moment ago.
 */
async function writeSnapshot(
  sql: Tx,
  scope: { projectId: number; environmentId: number },
  day: string,
  previousDay: Fragment,
  counts: Fragment,
): Promise<void> {
  await sql`
    insert into test_case_cumulative (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                      flaky_count, skip_count, last_run_at, day_runs, duration_sum)
    select ${scope.projectId}, ${scope.environmentId}, ${day}::date, coalesce(s.test_case_id, c.test_case_id),
           coalesce(c.total_runs, 0) + coalesce(s.total_runs, 0), coalesce(c.pass_count, 0) + coalesce(s.pass_count, 0),
           coalesce(c.fail_count, 0) + coalesce(s.fail_count, 0), coalesce(c.flaky_count, 0) + coalesce(s.flaky_count, 0),
           coalesce(c.skip_count, 0) + coalesce(s.skip_count, 0), greatest(c.last_run_at, s.last_run_at), coalesce(s.total_runs, 0),
           coalesce(c.duration_sum, 0) + coalesce(s.duration_sum, 0)
    from (select test_case_id, total_runs, pass_count, fail_count, flaky_count, skip_count, last_run_at, duration_sum
          from test_case_cumulative
          where project_id = ${scope.projectId} and environment_id = ${scope.environmentId} and day = ${previousDay}) c
    full join (${counts}) s on s.test_case_id = c.test_case_id
    order by 4`;
}

/** The run has ended: a job adds it to the rollups right after (`rollUpNext`). In the transaction that ends it. */
export async function enqueueRollup(sql: Tx, runId: number, projectId: number, now: Date): Promise<void> {
  await sql`insert into rollup_queue (test_run_id, project_id, queued_at) values (${runId}, ${projectId}, ${now}) on conflict do nothing`;
}

/** The oldest waiting run that no other process has taken, locked until the transaction ends; null when none waits. */
export async function takeQueued(sql: Tx): Promise<number | null> {
  const [next] = await sql<{ test_run_id: number }[]>`
    select test_run_id from rollup_queue order by test_run_id for update skip locked limit 1`;
  return next?.test_run_id ?? null;
}

export async function removeQueued(sql: Tx, runId: number): Promise<void> {
  await sql`delete from rollup_queue where test_run_id = ${runId}`;
}

/**
 * Before a project's rollups are rebuilt from its results, which count every ended run after
 * `horizon` (a day; null: every day): its waiting runs of those days are dropped, and runs that
 * end meanwhile wait to enter the queue until the rebuild commits (so that none is counted twice
 * or missed). Take it before the rollup tables' locks.
 */
export async function dropQueuedForRebuild(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  await sql`lock table rollup_queue in exclusive mode`;
  await sql`
    delete from rollup_queue q using test_runs r
    where q.project_id = ${projectId} and r.id = q.test_run_id
      ${horizon === null ? sql`` : sql`and (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date > ${horizon}::date`}`;
}

/** How many ended runs wait for their rollup. */
export async function queuedRollups(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from rollup_queue`;
  return row?.n ?? 0;
}
