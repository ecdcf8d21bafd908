import type postgres from 'postgres';
import type { Tx } from '../db.ts';

/** A piece of SQL to embed: a day, or a query. */
type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * Writes a scope's snapshot of `day` in one pass, in test order: the totals of the snapshot of
 * `previousDay` (a date, or a query giving one; none: a first snapshot) full-joined with `counts`,
 * a query of the day's own (test_case_id, total_runs, pass_count, fail_count, flaky_count,
 * skip_count, last_run_at). A full join is a hash or merge join, never a loop over a snapshot per
 * test, whatever the statistics of rows written a moment ago.
 */
export async function writeSnapshot(
  sql: Tx,
  scope: { projectId: number; environmentId: number },
  day: string,
  previousDay: Fragment,
  counts: Fragment,
): Promise<void> {
  await sql`
    insert into test_case_cumulative (project_id, environment_id, day, test_case_id, total_runs, pass_count, fail_count,
                                      flaky_count, skip_count, last_run_at, day_runs)
    select ${scope.projectId}, ${scope.environmentId}, ${day}::date, coalesce(s.test_case_id, c.test_case_id),
           coalesce(c.total_runs, 0) + coalesce(s.total_runs, 0), coalesce(c.pass_count, 0) + coalesce(s.pass_count, 0),
           coalesce(c.fail_count, 0) + coalesce(s.fail_count, 0), coalesce(c.flaky_count, 0) + coalesce(s.flaky_count, 0),
           coalesce(c.skip_count, 0) + coalesce(s.skip_count, 0), greatest(c.last_run_at, s.last_run_at), coalesce(s.total_runs, 0)
    from (select test_case_id, total_runs, pass_count, fail_count, flaky_count, skip_count, last_run_at
          from test_case_cumulative
          where project_id = ${scope.projectId} and environment_id = ${scope.environmentId} and day = ${previousDay}) c
    full join (${counts}) s on s.test_case_id = c.test_case_id
    order by 4`;
}
