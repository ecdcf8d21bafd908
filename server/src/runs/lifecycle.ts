import { NotFoundError, PreconditionFailedError } from '../errors.ts';
import { rollupRun } from '../analytics/rollup.ts';
import { deleteRunKeys } from '../auth/store.ts';
import type { Tx } from '../db.ts';
import { isTerminal, type Trigger } from './schema.ts';

export interface NewRun {
  environmentId: number;
  origin: 'api' | 'schedule';
  branch: string | null;
  build: Trigger['build'] | null;
  metadata: Record<string, string | number>;
  overrides: { name: string; value: string }[];
  tags: string[];
  testCaseIds: string[];
  sendNotifications: boolean;
  totalShards: number;
  rerunSourceId: number | null;
  rerunOnlyFailed: boolean;
  scmActor: string | null;
  scheduledFor: Date | null;
}

/** A run waiting for an executor. Returns null when a scheduled tick already made its run. */
export async function createPendingRun(sql: Tx, projectId: number, run: NewRun, now: Date) {
  const [row] = await sql<{ id: number; state: 'pending'; test_run_branch: string | null; created_at: Date }[]>`
    insert into test_runs (project_id, environment_id, state, origin, test_run_branch, build, build_url, build_branch, "commit",
                           metadata, environment_variables_overrides, tags, test_case_ids, send_notifications, total_shards,
                           rerun_source_id, rerun_only_failed, scm_actor, scheduled_for, created_at)
    values (${projectId}, ${run.environmentId}, 'pending', ${run.origin}, ${run.branch}, ${run.build ? sql.json(run.build) : null},
            ${run.build?.url ?? null}, ${run.build?.branch ?? null}, ${run.build?.commit ?? null}, ${sql.json(run.metadata)},
            ${sql.json(run.overrides)}, ${run.tags}, ${run.testCaseIds}, ${run.sendNotifications}, ${run.totalShards},
            ${run.rerunSourceId}, ${run.rerunOnlyFailed}, ${run.scmActor}, ${run.scheduledFor}, ${now})
    on conflict (environment_id, scheduled_for) where scheduled_for is not null do nothing
    returning id, state, test_run_branch, created_at`;
  return row ?? null;
}

/** The source run's tests whose final outcome was a failure, in every runner project where they failed. */
export async function failedTestIds(sql: Tx, runId: number): Promise<string[]> {
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results where test_run_id = ${runId} and is_final and outcome = 'failed' order by test_case_id`;
  return rows.map((row) => row.test_case_id);
}

/** Cancels a run that has not finished; a finished one is a 412. */
export async function cancelRun(sql: Tx, projectId: number, runId: number, reason: string | null, cancelledBy: string, now: Date): Promise<void> {
  const [run] = await sql<{ state: string }[]>`
    select state from test_runs where project_id = ${projectId} and id = ${runId} for update`;
  if (!run) throw new NotFoundError('test run not found');
  if (isTerminal(run.state)) {
    throw new PreconditionFailedError(`test run ${runId} has already ended (${run.state}); only a pending, queued or running run can be cancelled`);
  }
  await sql`
    update test_runs set
      state = 'cancelled', cancel_reason = ${reason}, cancelled_by = ${cancelledBy},
      run_ended_at = ${now},
      duration = case when run_started_at is null then null
                      else greatest(0, round(extract(epoch from (${now}::timestamptz - run_started_at)) * 1000))::int end
    where id = ${runId}`;
  await rollupRun(sql, runId);
  await deleteRunKeys(sql, runId);
}
