import type { Tx } from '../db.ts';
import type { Actor } from '../audit/index.ts';
import { environmentForReport } from '../environments/index.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { ListedTest } from '../testcases/index.ts';
import { isTerminal } from '../states.ts';
import { listUploadedTests, recordShardEnd } from './ingest.ts';
import { lockOpenRun } from './open-run.ts';
import { findOrCreateReportRun, markRunning } from './record.ts';
import { type ResultWrite, writeResults } from './results.ts';
import type { Attempt } from './schema.ts';
import { insertShard, shardEnded } from './shards-store.ts';
import { firstStoredTest, shardHasUnsnoozedFailure } from './store.ts';

// A shard reported in one request (a JUnit upload) rather than over a reporter's many: begun, its
// tests and results written batch by batch, and ended, all in the one transaction its caller
// holds, so that a request that fails leaves nothing behind.

export interface UploadTarget {
  environment: string;
  runKey: string;
  shard: number;
  totalShards: number;
  branch: string | null;
  commit: string | null;
  buildUrl: string | null;
  pullRequest: number | null;
  /** Who uploads: the audit trail's actor of an environment the upload makes on first use. */
  actor: Actor;
}

export interface UploadShard {
  runId: number;
  shard: number;
  commit: string | null;
  /** This shard of this run was uploaded before (a retried upload): its stored results answer. */
  uploadedBefore: boolean;
}

/** The run of the upload's key (made by its first shard) with this shard begun; or the shard as an earlier upload left it. */
export async function beginUploadShard(sql: Tx, projectId: number, target: UploadTarget, now: Date): Promise<UploadShard> {
  const environment = await environmentForReport(sql, projectId, target.environment, 'query.environment', { actor: target.actor, now });
  const run = await findOrCreateReportRun(
    sql,
    projectId,
    {
      environmentId: environment.id,
      runKey: target.runKey,
      totalShards: target.totalShards,
      branch: target.branch,
      commit: target.commit,
      buildUrl: target.buildUrl,
      pullRequest: target.pullRequest,
      maxFailures: null,
    },
    now,
  );
  if (run.environment_id !== environment.id) throw new ConflictError(`query.run_key: "${target.runKey}" belongs to run ${run.id} of another environment`);
  const shard = { runId: run.id, shard: target.shard, commit: target.commit };
  if (await shardEnded(sql, run.id, target.shard)) return { ...shard, uploadedBefore: true };
  if (isTerminal(run.state)) throw new ConflictError(`query.run_key: "${target.runKey}" belongs to run ${run.id}, which has ended; a new run needs a new key`);
  const locked = await lockOpenRun(sql, projectId, run.id, 'batch');
  if (target.shard > locked.total_shards) throw new InvalidInputError(`query.shard: run ${run.id} has ${locked.total_shards} shard(s)`);
  await insertShard(sql, run.id, target.shard, false, now);
  await markRunning(sql, run.id, now, target.commit, now);
  return { ...shard, uploadedBefore: false };
}

/** A test of an upload that its run recorded already: an earlier batch or shard holds its results. */
export class TestRecordedAlreadyError extends ConflictError {
  constructor(readonly testId: string) {
    super(`test ${testId} is recorded in this run already`);
  }
}

/** The test of a COPY that met a test the run lists or a result it holds (the key is in the error's detail), or null for any other error. */
function recordedTest(error: unknown): string | null {
  const pgError = error as { code?: string; constraint_name?: string; detail?: string };
  if (pgError?.code !== '23505' || !['test_results_pkey', 'test_run_tests_pkey'].includes(pgError.constraint_name ?? '')) return null;
  return /\(test_run_id, test_case_id(?:, retry)?\)=\(\d+, ([^,)]+)/.exec(pgError.detail ?? '')?.[1] ?? null;
}

/** One batch of the upload: its tests listed, then their attempts. */
export async function recordUploadBatch(
  sql: Tx,
  projectId: number,
  shard: UploadShard,
  batch: { tests: ListedTest[]; attempts: Attempt[] },
  write: ResultWrite,
  now: Date,
): Promise<void> {
  if (batch.tests.length === 0) return;
  if (write === 'insert') {
    // The insert skips a stored result without a word: the batch's tests are looked for first.
    const stored = await firstStoredTest(
      sql,
      shard.runId,
      batch.tests.map((t) => t.id),
    );
    if (stored) throw new TestRecordedAlreadyError(stored);
  }
  try {
    await listUploadedTests(sql, projectId, shard.runId, batch.tests, { commit: shard.commit, now, copy: write === 'copy' });
    await writeResults(sql, { projectId, runId: shard.runId, shard: shard.shard, attempts: batch.attempts, now }, write);
  } catch (error) {
    const testId = recordedTest(error);
    throw testId ? new TestRecordedAlreadyError(testId) : error;
  }
}

/** The shard ends, passed or failed by its results; the run ends with its last shard. */
export async function endUploadShard(sql: Tx, projectId: number, shard: UploadShard, now: Date): Promise<void> {
  const failed = await shardHasUnsnoozedFailure(sql, shard.runId, shard.shard);
  await recordShardEnd(sql, projectId, shard.runId, shard.shard, { status: failed ? 'failed' : 'passed', errors: [] }, now);
}
