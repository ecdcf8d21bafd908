import { pipelinedTransaction, type PipelinedWork, retryingConflicts, type Sql, type Tx } from '../db.ts';
import { upsertTestCases } from '../testcases/index.ts';
import { recordSnapshotLayout } from '../visual/index.ts';
import { finishRun } from './finish.ts';
import { lockOpenRun, openRunForShard } from './open-run.ts';
import { markRunning, touchRun } from './record.ts';
import type { ShardBegin, ShardEndStatus } from './schema.ts';
import { copyRunTests, insertShard, listRunTests, recordShardStatus, shardProgress } from './shards-store.ts';

/**
 * A shard starts: the run is running, the shard's tests are listed in the run and the inventory.
 * One transaction; answers the run's number in its project.
 */
export async function beginShard(sql: Sql, projectId: number, runId: number, shard: number, body: ShardBegin, now: Date): Promise<number> {
  return await retryingConflicts(() => pipelinedTransaction(sql, (tx) => recordShardBegin(tx, projectId, runId, shard, body, now)));
}

/**
 * The run's lock and every write go out together with the COMMIT, in one write (PostgreSQL runs
 * them in that order), so that the transaction never waits on this server while it holds the run's
 * row: a run that refuses the shard fails the lock's statement, which rolls the writes back. Not
 * the exclusive lock: the batches of the run's other shards, each holding its key share, would make
 * a begin wait, and every batch asked for after it would then wait behind it.
 */
async function recordShardBegin(
  sql: Tx,
  projectId: number,
  runId: number,
  shard: number,
  body: ShardBegin,
  now: Date,
): Promise<PipelinedWork<Promise<number>>> {
  const opened = openRunForShard(sql, projectId, runId, shard);
  const startedAt = body.started_at ? new Date(body.started_at) : now;
  const written = Promise.all([
    insertShard(sql, runId, shard, body.complete, startedAt),
    markRunning(sql, runId, startedAt, body.commit, now),
    upsertTestCases(sql, projectId, body.tests, body.commit, now),
    listRunTests(sql, projectId, runId, body.tests),
    body.snapshots ? recordSnapshotLayout(sql, projectId, runId, body.snapshots, now) : null,
  ]);
  // A refused run fails these too (the transaction is aborted): the lock's refusal is the answer.
  written.catch(() => undefined);
  // The run's number is the lock statement's answer, settled with the rest once COMMIT is sent.
  return { result: opened, last: Promise.all([opened, written]) };
}

/**
 * An upload's tests, listed in the inventory and the run as they come, inside the upload's
 * transaction. The run's list by COPY where the database takes it, a third of the insert's cost at
 * 100,000 tests: an upload's tests are new to its run, and one that is not fails the COPY (and the
 * upload), where the insert would skip it.
 */
export async function listUploadedTests(
  sql: Tx,
  projectId: number,
  runId: number,
  tests: ShardBegin['tests'],
  options: { commit: string | null; now: Date; copy: boolean },
): Promise<void> {
  // A report file names no owners: the tests keep those their reporter's runs gave them.
  const upserted = upsertTestCases(sql, projectId, tests, options.commit, options.now, { keepOwners: true });
  // The run's list goes out right behind the inventory's upsert, not after its answer: the
  // database goes from one to the other without waiting for this server (busy reading the next
  // batch) to take the answer and send the list. (Nothing may follow a COPY before its end: it is
  // last.) A failed upsert fails the list too, in an aborted transaction: its error says why.
  upserted.catch(() => undefined);
  const listed = (options.copy ? copyRunTests : listRunTests)(sql, projectId, runId, tests);
  const [upsert, list] = await Promise.allSettled([upserted, listed]);
  if (upsert.status === 'rejected') throw upsert.reason;
  if (list.status === 'rejected') throw list.reason;
}

type ShardEndInput = [projectId: number, runId: number, shard: number, end: { status: ShardEndStatus; errors: string[] }, now: Date];

/** A shard ends; when it is the last, the run ends. One transaction. */
export function endShard(sql: Sql, ...input: ShardEndInput): Promise<void> {
  return retryingConflicts(() => sql.begin((tx) => recordShardEnd(tx, ...input)));
}

export async function recordShardEnd(sql: Tx, ...[projectId, runId, shard, end, now]: ShardEndInput): Promise<void> {
  await lockOpenRun(sql, projectId, runId);
  await recordShardStatus(sql, runId, shard, end, now);
  await touchRun(sql, runId, now);
  const progress = await shardProgress(sql, runId);
  if (progress && progress.ended >= progress.total) await finishRun(sql, runId, { kind: 'reported' }, now);
}
