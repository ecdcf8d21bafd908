import { DAY_MS } from '../context.ts';
import type { Tx } from '../db.ts';

export interface BadgeState {
  environmentName: string;
  /** The latest finished run, or null when the environment has none. */
  latest: { state: string; success_count: number; failed_count: number; flaky_count: number; skipped_count: number } | null;
  /** Finished runs of the last 7 days, cancelled ones left out. */
  week: { passed: number; finished: number };
}

/** One query: the environment, its latest finished run and its week; null for an unknown one. */
export async function readBadgeState(sql: Tx, projectId: number, slug: string, now: Date): Promise<BadgeState | null> {
  const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
  const [row] = await sql<
    {
      name: string;
      state: string | null;
      success_count: number | null;
      failed_count: number | null;
      flaky_count: number | null;
      skipped_count: number | null;
      week_passed: number;
      week_finished: number;
    }[]
  >`
    select e.name, latest.state, latest.success_count, latest.failed_count, latest.flaky_count, latest.skipped_count,
           coalesce(week.passed, 0)::int as week_passed, coalesce(week.finished, 0)::int as week_finished
    from environments e
    left join lateral (
      select r.state, r.success_count, r.failed_count, r.flaky_count, r.skipped_count
      from test_runs r
      where r.environment_id = e.id and r.run_ended_at is not null
      order by r.run_ended_at desc limit 1
    ) latest on true
    left join lateral (
      select count(*) filter (where r.state = 'passed') as passed, count(*) as finished
      from test_runs r
      where r.environment_id = e.id and r.run_ended_at >= ${weekAgo} and r.state in ('passed', 'failed', 'error')
    ) week on true
    where e.project_id = ${projectId} and e.slug = ${slug}`;
  if (!row) return null;
  return {
    environmentName: row.name,
    latest:
      row.state === null
        ? null
        : {
            state: row.state,
            success_count: row.success_count ?? 0,
            failed_count: row.failed_count ?? 0,
            flaky_count: row.flaky_count ?? 0,
            skipped_count: row.skipped_count ?? 0,
          },
    week: { passed: row.week_passed, finished: row.week_finished },
  };
}
