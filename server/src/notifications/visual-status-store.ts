import type { Tx } from '../db.ts';
import { destinationColumns, type StoredDestination } from './store.ts';

// The one module that writes `visual_status_deliveries`: the `proctor/visual` commit statuses to send.

/**
 * Queues the state to send to each GitHub and GitLab destination of the run's project whose
 * environments take the run, when the run has a commit; a state queued before and not sent yet is
 * replaced, and `commentLine` (when given) is the pull/merge request comment's line on the run's
 * visual changes. Answers how many were queued.
 */
export async function queueVisualStatus(
  sql: Tx,
  runId: number,
  state: 'pending' | 'success' | 'failure',
  description: string,
  now: Date,
  commentLine: string | null = null,
): Promise<number> {
  const rows = await sql`
    insert into visual_status_deliveries (project_id, destination_id, test_run_id, state, description, comment_line, next_attempt_at, queued_at)
    select d.project_id, d.id, r.id, ${state}, ${description}, ${commentLine}, ${now}, ${now}
    from test_runs r
    join environments e on e.id = r.environment_id
    join notification_destinations d on d.project_id = r.project_id and d.type in ('github', 'gitlab')
    where r.id = ${runId} and coalesce(r.test_run_head_sha, r."commit") is not null
      and (cardinality(d.environments) = 0 or e.slug = any(d.environments))
    order by d.id
    on conflict (destination_id, test_run_id) do update set state = excluded.state, description = excluded.description,
      comment_line = coalesce(excluded.comment_line, visual_status_deliveries.comment_line),
      attempts = 0, last_error = null, next_attempt_at = excluded.next_attempt_at, queued_at = excluded.queued_at, delivered_at = null
    returning id`;
  return rows.length;
}

export interface DueVisualStatus {
  id: number;
  test_run_id: number;
  state: 'pending' | 'success' | 'failure';
  description: string;
  attempts: number;
  queued_at: Date;
  commit: string;
  branch: string | null;
  destination: StoredDestination;
}

/** The next status due that no other process holds, locked until the transaction ends. */
export async function takeDueVisualStatus(sql: Tx, now: Date): Promise<DueVisualStatus | null> {
  const [row] = await sql<DueVisualStatus[]>`
    select v.id::int as id, v.test_run_id, v.state, v.description, v.attempts, v.queued_at,
           coalesce(r.test_run_head_sha, r."commit") as "commit", coalesce(r.build_branch, r.test_run_branch) as branch,
           to_jsonb(t) as destination
    from visual_status_deliveries v
    join test_runs r on r.id = v.test_run_id
    join lateral (select ${destinationColumns(sql)} from notification_destinations where id = v.destination_id) t on true
    where v.next_attempt_at <= ${now}
    order by v.next_attempt_at, v.id limit 1 for update of v skip locked`;
  if (!row) return null;
  return { ...row, destination: { ...row.destination, created_at: new Date(row.destination.created_at) } };
}

/** Sent: nothing more to do. */
export async function markVisualStatusSent(sql: Tx, id: number, now: Date): Promise<void> {
  await sql`update visual_status_deliveries set attempts = attempts + 1, last_error = null, next_attempt_at = null, delivered_at = ${now} where id = ${id}`;
}

/** An attempt failed: tried again at `retryAt`, or given up on when that is null. */
export async function markVisualStatusFailed(sql: Tx, id: number, error: string, retryAt: Date | null): Promise<void> {
  await sql`update visual_status_deliveries set attempts = attempts + 1, last_error = ${error}, next_attempt_at = ${retryAt} where id = ${id}`;
}

/** A comment line on visual changes, and the run it is of. */
export interface VisualLine {
  line: string;
  run_id: number;
  run_number: number;
}

/**
 * The pull/merge request comment's line on visual changes for the run's section, as last queued:
 * the run's own, else that of the latest earlier run of its environment and branch that has one
 * (whose baselines the run may be proving); null: none.
 */
export async function visualLineOf(sql: Tx, runId: number): Promise<VisualLine | null> {
  const [row] = await sql<VisualLine[]>`
    select v.comment_line as line, o.id as run_id, o.number as run_number
    from test_runs r
    join test_runs o on o.project_id = r.project_id and o.environment_id = r.environment_id and o.id <= r.id
      and coalesce(o.build_branch, o.test_run_branch) is not distinct from coalesce(r.build_branch, r.test_run_branch)
    join visual_status_deliveries v on v.test_run_id = o.id and v.comment_line is not null
    where r.id = ${runId}
    order by o.id desc, v.queued_at desc, v.id desc limit 1`;
  return row ?? null;
}

/** The newest ended run of the run's environment and branch (the run itself when none is newer): the one its request comment's section shows. */
export async function newestRunOnBranch(sql: Tx, runId: number): Promise<number> {
  const [row] = await sql<{ id: number }[]>`
    select n.id from test_runs r
    join test_runs n on n.project_id = r.project_id and n.environment_id = r.environment_id and n.id > r.id
      and coalesce(n.build_branch, n.test_run_branch) is not distinct from coalesce(r.build_branch, r.test_run_branch)
      and n.state in ('passed', 'failed', 'error', 'cancelled')
    where r.id = ${runId}
    order by n.id desc limit 1`;
  return row?.id ?? runId;
}
