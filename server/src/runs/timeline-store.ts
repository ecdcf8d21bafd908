import type { Tx } from '../db.ts';
import type { TimelineAttempt } from './timeline.ts';

/** The most attempts a run's timeline draws: a larger run is drawn from its first ones, and says so. */
export const TIMELINE_ATTEMPTS = 3000;

/** The run's attempts that have a start time, in the order they started, and how many there are. */
export async function timelineAttempts(sql: Tx, runId: number, limit = TIMELINE_ATTEMPTS): Promise<{ attempts: TimelineAttempt[]; total: number }> {
  const rows = await sql<(TimelineAttempt & { total: number })[]>`
    select r.test_case_id, coalesce(t.title, r.test_case_id) as title, r.shard, a.id as agent_id, a.name as agent, r.parallel_index, r.retry,
           r.status, r.started_at, r.duration, count(*) over ()::int as total
    from test_results r left join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
      left join test_run_units u on u.test_run_id = r.test_run_id and u.unit = r.shard
      left join test_run_agents a on a.id = u.agent_id
    where r.test_run_id = ${runId} and r.started_at is not null and r.status <> 'skipped'
    order by r.started_at, r.shard, r.test_case_id, r.retry
    limit ${limit}`;
  return { attempts: rows.map(({ total: _total, ...attempt }) => attempt), total: rows[0]?.total ?? 0 };
}
