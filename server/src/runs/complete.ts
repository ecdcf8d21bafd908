import type { Tx } from '../db.ts';
import { rollupRun } from '../analytics/rollup.ts';
import { deleteRunKeys } from '../auth/store.ts';
import { deactivateUnlisted } from '../testcases/store.ts';
import { isTerminal } from './schema.ts';

interface ShardOutcome {
  shard: number;
  status: string | null;
  complete: boolean;
  errors: string[];
}

function errorReason(shards: ShardOutcome[], totalShards: number, failedCount: number, forced: boolean): string | null {
  const reasons: string[] = [];
  for (const s of shards) {
    if (s.status === 'timedout') reasons.push(`shard ${s.shard} timed out`);
    if (s.status === 'interrupted') reasons.push(`shard ${s.shard} was interrupted`);
    if (s.status === 'crashed') reasons.push(`shard ${s.shard} ended without reporting its end`);
    if (s.status === 'failed' && failedCount === 0) reasons.push(`shard ${s.shard} failed without a failing test`);
    for (const message of s.errors) reasons.push(`shard ${s.shard}: ${message}`);
  }
  const ended = new Set(shards.filter((s) => s.status !== null).map((s) => s.shard));
  // A run that failed before any shard began (a checkout, an install) has its reason already.
  if (forced && shards.length === 0) return reasons.length > 0 ? reasons.join('\n') : null;
  for (let shard = 1; shard <= totalShards; shard++) {
    if (!ended.has(shard)) reasons.push(`shard ${shard} never ended`);
  }
  return reasons.length > 0 ? reasons.join('\n') : null;
}

/**
 * Finishes a run from what was recorded: counts from its tests, `error` when a shard did not end
 * cleanly, `failed` when a failure no snooze covers remains, else `passed`. `forcedReason` makes
 * it `error` whatever the results (a timeout, a lost executor).
 */
export async function completeRun(sql: Tx, runId: number, now: Date, forcedReason: string | null = null): Promise<void> {
  const [run] = await sql<{ state: string; project_id: number; total_shards: number; tags: string[]; test_case_ids: string[]; error_reason: string | null }[]>`
    select state, project_id, total_shards, tags, test_case_ids, error_reason from test_runs where id = ${runId} for update`;
  if (!run || isTerminal(run.state)) return;
  const [counts] = await sql<{ passed: number; failed: number; flaky: number; skipped: number; snoozed: number }[]>`
    select count(*) filter (where outcome = 'passed')::int as passed,
           count(*) filter (where outcome = 'failed')::int as failed,
           count(*) filter (where outcome = 'flaky')::int as flaky,
           count(*) filter (where outcome = 'skipped')::int as skipped,
           count(*) filter (where outcome = 'failed' and snoozed)::int as snoozed
    from test_results where test_run_id = ${runId} and is_final`;
  const c = counts as NonNullable<typeof counts>;
  const shards = await sql<ShardOutcome[]>`
    select shard, status, complete, errors from test_run_shards where test_run_id = ${runId} order by shard`;
  const reason = [run.error_reason, forcedReason, errorReason(shards, run.total_shards, c.failed, forcedReason !== null)].filter(Boolean).join('\n') || null;
  const state = reason ? 'error' : c.failed - c.snoozed > 0 ? 'failed' : 'passed';
  await sql`
    update test_runs set
      state = ${state},
      success_count = ${c.passed}, failed_count = ${c.failed}, flaky_count = ${c.flaky}, skipped_count = ${c.skipped},
      snoozed_count = ${c.snoozed}, total_count = ${c.passed + c.failed + c.flaky + c.skipped},
      error_reason = ${reason},
      run_started_at = coalesce(run_started_at, ${now}),
      run_ended_at = ${now},
      duration = greatest(0, round(extract(epoch from (${now}::timestamptz - coalesce(run_started_at, ${now}::timestamptz))) * 1000))::int
    where id = ${runId}`;
  await rollupRun(sql, runId);
  // The key the executor made for this run's reporter ends with the run, in the same transaction.
  await deleteRunKeys(sql, runId);
  const wholeSuite = shards.length === run.total_shards && shards.every((s) => s.complete) && run.tags.length === 0 && run.test_case_ids.length === 0;
  if (state !== 'error' && wholeSuite) await deactivateMissing(sql, run.project_id, runId, now);
}

/** After a run over the whole suite: tests of its runner projects that it no longer listed are inactive. */
async function deactivateMissing(sql: Tx, projectId: number, runId: number, now: Date): Promise<void> {
  const listed = await sql<{ test_case_id: string; runner_project: string }[]>`
    select test_case_id, runner_project from test_run_tests where test_run_id = ${runId}`;
  const projects = [...new Set(listed.map((row) => row.runner_project))];
  await deactivateUnlisted(sql, projectId, projects, listed.map((row) => row.test_case_id), now);
}
