import { enqueueRollup } from '../analytics/index.ts';
import { deleteRunKeys } from '../auth/index.ts';
import { enqueueNotifications } from '../notifications/index.ts';
import { queueFollow } from '../trackers/index.ts';
import type { Sql, Tx } from '../db.ts';
import { NotFoundError, PreconditionFailedError } from '../errors.ts';
import { isTerminal } from '../states.ts';
import { deactivateUnlisted } from '../testcases/index.ts';
import { type EndingRun, lockRun, recordCancel, recordEnd } from './record.ts';
import { listedTestsOfRun, type ShardOutcome, shardOutcomes } from './shards-store.ts';
import { countFinalOutcomes, runStateInProject } from './store.ts';

/** Every way a run ends. */
export type RunEnding =
  /** Its last shard reported its end: the results decide. */
  | { kind: 'reported' }
  /** It could not finish (a timeout, a lost executor, silent shards, a failed checkout): `error` with the reason. */
  | { kind: 'failed'; reason: string }
  | { kind: 'cancelled'; reason: string | null; by: string };

/**
 * Ends a run that has not ended, the one way every ending goes: its end state and counts, its
 * rollup, its notifications and its tracker follow-up queued (jobs write and send them right after), its reporter key gone, and after a whole-suite run
 * the tests it no longer lists inactive. Returns false when the run had ended already (or does not
 * exist).
 */
export async function finishRun(sql: Tx, runId: number, ending: RunEnding, now: Date): Promise<boolean> {
  const run = await lockRun(sql, runId);
  if (!run || isTerminal(run.state)) return false;
  if (ending.kind === 'cancelled') {
    await recordCancel(sql, runId, ending.reason, ending.by, now);
  } else {
    const { state, shards } = await decideEnd(sql, runId, run, ending, now);
    if (state !== 'error' && coversWholeSuite(run, shards)) await deactivateMissing(sql, run.project_id, runId, now);
  }
  await enqueueRollup(sql, runId, run.project_id, now);
  await enqueueNotifications(sql, runId, now);
  // Its tracker issues move once it is rolled up (a job follows it then).
  await queueFollow(sql, runId, now);
  // The key the executor made for this run's reporter ends with the run, in the same transaction.
  await deleteRunKeys(sql, runId);
  return true;
}

/** Ends a run that could not finish (a timeout, a lost executor, silent shards) as `error`, in a transaction of its own. */
export function failRun(sql: Sql, runId: number, reason: string, now: Date): Promise<boolean> {
  return sql.begin((tx) => finishRun(tx, runId, { kind: 'failed', reason }, now));
}

/** Cancels a pending, queued or running run of the project; an ended one is a precondition that failed. One transaction. */
export function cancelRun(sql: Sql, projectId: number, runId: number, reason: string | null, cancelledBy: string, now: Date): Promise<void> {
  return sql.begin((tx) => cancelOpenRun(tx, projectId, runId, reason, cancelledBy, now));
}

async function cancelOpenRun(sql: Tx, projectId: number, runId: number, reason: string | null, cancelledBy: string, now: Date): Promise<void> {
  const state = await runStateInProject(sql, projectId, runId);
  if (!state) throw new NotFoundError('test run not found');
  if (!(await finishRun(sql, runId, { kind: 'cancelled', reason, by: cancelledBy }, now))) {
    const ended = await runStateInProject(sql, projectId, runId);
    throw new PreconditionFailedError(`test run ${runId} has already ended (${ended ?? state}); only a pending, queued or running run can be cancelled`);
  }
}

/** From what was recorded: `error` when a shard did not end cleanly or the ending forces it, `failed` when a failure no snooze covers remains. */
async function decideEnd(sql: Tx, runId: number, run: EndingRun, ending: RunEnding, now: Date) {
  const counts = await countFinalOutcomes(sql, runId);
  const shards = await shardOutcomes(sql, runId);
  const forcedReason = ending.kind === 'failed' ? ending.reason : null;
  const reason =
    [run.error_reason, forcedReason, errorReason(shards, run.total_shards, counts.failed, forcedReason !== null)].filter(Boolean).join('\n') || null;
  const state = reason ? 'error' : counts.failed - counts.snoozed > 0 ? 'failed' : 'passed';
  await recordEnd(sql, runId, { state, counts, reason }, now);
  return { state, shards };
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

function coversWholeSuite(run: EndingRun, shards: ShardOutcome[]): boolean {
  return (
    shards.length === run.total_shards && shards.every((s) => s.complete) && run.tags.length === 0 && run.test_case_ids.length === 0 && !run.left_tests_out
  );
}

/** After a run over the whole suite: tests of its runner projects that it no longer listed are inactive. */
async function deactivateMissing(sql: Tx, projectId: number, runId: number, now: Date): Promise<void> {
  const listed = await listedTestsOfRun(sql, runId);
  const projects = [...new Set(listed.map((row) => row.runner_project))];
  await deactivateUnlisted(
    sql,
    projectId,
    projects,
    listed.map((row) => row.test_case_id),
    now,
  );
}
