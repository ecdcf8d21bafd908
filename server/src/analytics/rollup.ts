import type { Tx } from '../db.ts';
import { writeSnapshot } from './snapshot.ts';

/**
 * Adds an ended run to the daily rollups of its day (the day it started, UTC): its environment's
 * and the project's (environment 0). Rollups of one project and day are written one at a time.
 */
export async function rollupRun(sql: Tx, runId: number): Promise<void> {
  const [run] = await sql<{ project_id: number; environment_id: number; day: string }[]>`
    select project_id, environment_id, (coalesce(run_started_at, created_at) at time zone 'UTC')::date::text as day
    from test_runs where id = ${runId}`;
  if (!run) return;
  await sql`select pg_advisory_xact_lock(${run.project_id}, ${Number(run.day.replaceAll('-', ''))})`;
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
                                           flaky_count, skip_count, last_run_at, day_runs)
    select ${projectId}, ${environmentId}, d.day, r.test_case_id, r.total_runs, r.pass_count, r.fail_count, r.flaky_count,
           r.skip_count, r.last_run_at, case when d.day = ${day}::date then r.total_runs else 0 end
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
      day_runs = c.day_runs + excluded.day_runs`;
}

/** What one run adds to each of its tests' totals. */
function runDeltas(sql: Tx, runId: number) {
  return sql`
    select t.test_case_id, (t.outcome <> 'skipped')::int as total_runs, (t.outcome = 'passed')::int as pass_count,
           (t.outcome = 'failed')::int as fail_count, (t.outcome = 'flaky')::int as flaky_count,
           (t.outcome = 'skipped')::int as skip_count, coalesce(r.run_ended_at, r.created_at) as last_run_at
    from test_results t join test_runs r on r.id = t.test_run_id
    where t.test_run_id = ${runId} and t.is_final`;
}
