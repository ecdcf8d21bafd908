import type { Tx } from '../db.ts';
import type { Actor } from '../audit/index.ts';
import { environmentForReport } from '../environments/index.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { ListedTest } from '../testcases/index.ts';
import { isTerminal } from '../states.ts';
import { listUploadedTests, lockOpenRun, recordShardEnd } from './ingest.ts';
import { findOrCreateReportRun, markRunning } from './record.ts';
import { type ResultWrite, writeResults } from './results.ts';
import type { Attempt } from './schema.ts';

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
    },
    now,
  );
  if (run.environment_id !== environment.id) throw new ConflictError(`query.run_key: "${target.runKey}" belongs to run ${run.id} of another environment`);
  const shard = { runId: run.id, shard: target.shard, commit: target.commit };
  const [ended] = await sql<{ ended: boolean }[]>`
    select status is not null as ended from test_run_shards where test_run_id = ${run.id} and shard = ${target.shard}`;
  if (ended?.ended) return { ...shard, uploadedBefore: true };
  if (isTerminal(run.state)) throw new ConflictError(`query.run_key: "${target.runKey}" belongs to run ${run.id}, which has ended; a new run needs a new key`);
  const locked = await lockOpenRun(sql, projectId, run.id, 'batch');
  if (target.shard > locked.total_shards) throw new InvalidInputError(`query.shard: run ${run.id} has ${locked.total_shards} shard(s)`);
  await sql`
    insert into test_run_shards (test_run_id, shard, complete, started_at) values (${run.id}, ${target.shard}, false, ${now})
    on conflict (test_run_id, shard) do nothing`;
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
    const [stored] = await sql<{ test_case_id: string }[]>`
      select test_case_id from test_results
      where test_run_id = ${shard.runId} and test_case_id = any(${batch.tests.map((t) => t.id)}::text[]) limit 1`;
    if (stored) throw new TestRecordedAlreadyError(stored.test_case_id);
  }
  try {
    await listUploadedTests(sql, projectId, shard.runId, batch.tests, { commit: shard.commit, now, copy: write === 'copy' });
    await writeResults(sql, projectId, shard.runId, shard.shard, batch.attempts, now, write);
  } catch (error) {
    const testId = recordedTest(error);
    throw testId ? new TestRecordedAlreadyError(testId) : error;
  }
}

/**
 * The run started no later than `at`: when an upload's files say their tests began (a file's
 * report is uploaded after its tests ran), so that the run's duration, counted from its start to
 * its end, is the tests' and not the upload's.
 */
export async function startedNoLaterThan(sql: Tx, runId: number, at: Date): Promise<void> {
  await sql`update test_runs set run_started_at = least(coalesce(run_started_at, ${at}), ${at}) where id = ${runId}`;
}

/** The shard ends, passed or failed by its results; the run ends with its last shard. */
export async function endUploadShard(sql: Tx, projectId: number, shard: UploadShard, now: Date): Promise<void> {
  const [failed] = await sql<{ failed: boolean }[]>`
    select exists (select 1 from test_results where test_run_id = ${shard.runId} and shard = ${shard.shard} and is_final and outcome = 'failed' and not snoozed) as failed`;
  await recordShardEnd(sql, projectId, shard.runId, shard.shard, { status: failed?.failed ? 'failed' : 'passed', errors: [] }, now);
}

export interface UploadCounts {
  tests: number;
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
  failed_snoozed: number;
}

/** What the shard's results add up to, and its first failed tests. */
export async function uploadedResults(
  sql: Tx,
  shard: UploadShard,
  limit: number,
): Promise<{ counts: UploadCounts; failed: { test_case_id: string; title: string; file_path: string; snoozed: boolean }[] }> {
  const [counts] = await sql<UploadCounts[]>`
    select count(*)::int as tests,
           count(*) filter (where outcome = 'passed')::int as passed,
           count(*) filter (where outcome = 'failed')::int as failed,
           count(*) filter (where outcome = 'flaky')::int as flaky,
           count(*) filter (where outcome = 'skipped')::int as skipped,
           count(*) filter (where outcome = 'failed' and snoozed)::int as failed_snoozed
    from test_results where test_run_id = ${shard.runId} and shard = ${shard.shard} and is_final`;
  const failed = await sql<{ test_case_id: string; title: string; file_path: string; snoozed: boolean }[]>`
    select r.test_case_id, t.title, t.file_path, r.snoozed
    from test_results r join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
    where r.test_run_id = ${shard.runId} and r.shard = ${shard.shard} and r.is_final and r.outcome = 'failed'
    order by t.file_path, t.title limit ${limit}`;
  return { counts: counts as UploadCounts, failed };
}
