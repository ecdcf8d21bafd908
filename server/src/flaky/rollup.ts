import type { Tx } from '../db.ts';
import { commitOf, counted } from './counted.ts';

// The one module that writes `daily_test_flakiness`: run by run as runs are rolled up
// (recordRunFlakiness), or a project's at once from its results (rebuildFlakiness). Both count the
// same runs the same way; test/flaky.test.ts holds them equal.

/**
 * Adds an ended run to its tests' flakiness of its day: each counted test outcome, flaky when it
 * passed on a retry or when it flipped (passed where the run before on the same commit failed, or
 * the other way round).
 */
export async function recordRunFlakiness(sql: Tx, runId: number): Promise<void> {
  await sql`
    insert into daily_test_flakiness as f (project_id, environment_id, day, test_case_id, counted_runs, flaky_runs, failed_runs,
                                           last_flaky_run_id)
    select r.project_id, r.environment_id, r.day, t.test_case_id, 1, x.flaky::int, (t.outcome = 'failed')::int,
           case when x.flaky then r.id end
    from (select r.id, r.project_id, r.environment_id, coalesce(r.run_started_at, r.created_at) as started,
                 (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date as day, ${commitOf(sql, 'r')} as sha
          from test_runs r where r.id = ${runId} and ${counted(sql, 'r')}) r
    join test_results t on t.test_run_id = r.id and t.is_final and t.outcome in ('passed', 'failed', 'flaky')
    left join lateral (
      select p.outcome
      from test_runs b
      join test_results p on p.test_run_id = b.id and p.test_case_id = t.test_case_id and p.is_final
      where r.sha is not null and b.environment_id = r.environment_id and ${commitOf(sql, 'b')} = r.sha and b.id <> r.id
        and ${counted(sql, 'b')} and p.outcome in ('passed', 'failed', 'flaky')
        and (coalesce(b.run_started_at, b.created_at), b.id) < (r.started, r.id)
      order by coalesce(b.run_started_at, b.created_at) desc, b.id desc
      limit 1
    ) before on true
    cross join lateral (
      select t.outcome = 'flaky' or coalesce(t.outcome <> 'flaky' and before.outcome in ('passed', 'failed') and before.outcome <> t.outcome, false) as flaky
    ) x
    on conflict (project_id, environment_id, day, test_case_id) do update set
      counted_runs = f.counted_runs + 1,
      flaky_runs = f.flaky_runs + excluded.flaky_runs,
      failed_runs = f.failed_runs + excluded.failed_runs,
      last_flaky_run_id = greatest(f.last_flaky_run_id, excluded.last_flaky_run_id)`;
}

/** Rewrites a project's flakiness from its runs and results in one pass (inside the rollups' rebuild). */
export async function rebuildFlakiness(sql: Tx, projectId: number): Promise<void> {
  await sql`delete from daily_test_flakiness where project_id = ${projectId}`;
  await sql`
    insert into daily_test_flakiness (project_id, environment_id, day, test_case_id, counted_runs, flaky_runs, failed_runs,
                                      last_flaky_run_id)
    select ${projectId}, environment_id, day, test_case_id, count(*), count(*) filter (where flaky),
           count(*) filter (where outcome = 'failed'), max(id) filter (where flaky)
    from (
      select id, environment_id, day, test_case_id, outcome,
             outcome = 'flaky' or coalesce(outcome <> 'flaky' and sha is not null and before in ('passed', 'failed') and before <> outcome, false) as flaky
      from (
        select r.id, r.environment_id, r.day, r.sha, t.test_case_id, t.outcome,
               lag(t.outcome) over (partition by r.environment_id, r.sha, t.test_case_id order by r.started, r.id) as before
        from (select r.id, r.environment_id, coalesce(r.run_started_at, r.created_at) as started,
                     (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date as day, ${commitOf(sql, 'r')} as sha
              from test_runs r where r.project_id = ${projectId} and ${counted(sql, 'r')}) r
        join test_results t on t.test_run_id = r.id and t.is_final and t.outcome in ('passed', 'failed', 'flaky')
      ) ordered
    ) o
    group by environment_id, day, test_case_id
    order by environment_id, day, test_case_id`;
}
