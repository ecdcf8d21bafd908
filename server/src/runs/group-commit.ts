import { isDatabaseUnavailable, pipelinedTransaction, retryingConflicts, type Sql, takesCopyFromStdin } from '../db.ts';
import { copyBatches, isStoredAlready, recordBatch, type Recorded, type ResultBatch } from './results.ts';
import type { Attempt } from './schema.ts';
import { groupCommitAttempts, groupCommitBatches, groupCommitSeconds } from '../metrics.ts';

// Group commit. A reporter sends a batch a second per shard, often of one or two attempts: at a
// thousand shards the cost is per request (a transaction, its COMMIT's flush to disk, half a dozen
// socket writes), not per attempt. Batches that arrive while earlier ones are being written wait
// and are written together: one transaction, one COPY, one COMMIT. Each request is answered once
// its own rows are committed, as before; an idle server writes each batch at once, alone.

/** A batch of attempts as a request hands it over, and how its request is answered. */
interface PendingBatch extends ResultBatch {
  resolve: (recorded: Recorded) => void;
  reject: (error: unknown) => void;
}

type Record = (projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date) => Promise<Recorded>;

export interface ResultWriter {
  /** Records a batch of attempts of a run; resolves with how many were new once they are committed. */
  record(projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<number>;
  /** `record`, with the run's fail-fast limit as the write found it. */
  recordBatch: Record;
}

/** A writer of `recordBatch` alone, with `record` beside it. */
function writerOf(recordBatch: Record): ResultWriter {
  return { recordBatch, record: async (...batch) => (await recordBatch(...batch)).recorded };
}

/** Groups being written at once: the second fills while the first commits. */
const CONCURRENT_GROUPS = 2;
/** A group's size in attempts: a transaction and a COPY of bounded size, whatever the queue. */
const GROUP_ATTEMPTS = 5000;

/**
 * How a server writes result batches: grouped (`PROCTOR_GROUP_COMMIT`, on by default) where the
 * database takes COPY, else each batch in a transaction of its own. The database is asked on the
 * first batch, not at start, and again after a batch that could not ask it.
 */
export function resultWriter(sql: Sql, groupCommit: boolean): ResultWriter {
  let grouped: Promise<ResultWriter | null> | null = null;
  return writerOf(async (projectId, runId, shard, attempts, now) => {
    if (!grouped) {
      const asked = groupCommit ? takesCopyFromStdin(sql).then((copy) => (copy ? groupCommitWriter(sql) : null)) : Promise.resolve(null);
      // Asked while the database was down: asked again by the next batch. Kept, the failure
      // answered every later batch 503 for the life of the process, the database long back.
      asked.catch(() => {
        if (grouped === asked) grouped = null;
      });
      grouped = asked;
    }
    const writer = await grouped;
    return writer ? writer.recordBatch(projectId, runId, shard, attempts, now) : recordBatch(sql, { projectId, runId, shard, attempts, now });
  });
}

/** A writer that groups the batches that arrive together into one transaction each. */
export function groupCommitWriter(sql: Sql): ResultWriter {
  const waiting: PendingBatch[] = [];
  let writing = 0;
  let scheduled = false;

  function nextGroup(): PendingBatch[] {
    const group: PendingBatch[] = [];
    let attempts = 0;
    while (waiting.length > 0 && (group.length === 0 || attempts + (waiting[0] as PendingBatch).attempts.length <= GROUP_ATTEMPTS)) {
      const batch = waiting.shift() as PendingBatch;
      attempts += batch.attempts.length;
      group.push(batch);
    }
    groupCommitBatches.observe(group.length);
    groupCommitAttempts.observe(attempts);
    return group;
  }

  function writeWaiting(): void {
    scheduled = false;
    while (writing < CONCURRENT_GROUPS && waiting.length > 0) {
      const group = nextGroup();
      writing++;
      void writeGroup(sql, group).finally(() => {
        writing--;
        schedule();
      });
    }
  }

  // The batches of one turn of the event loop go together even when nothing else is being written.
  function schedule(): void {
    if (scheduled || waiting.length === 0 || writing >= CONCURRENT_GROUPS) return;
    scheduled = true;
    setImmediate(writeWaiting);
  }

  return writerOf(
    (projectId, runId, shard, attempts, now) =>
      new Promise<Recorded>((resolve, reject) => {
        waiting.push({ projectId, runId, shard, attempts, now, resolve, reject });
        schedule();
      }),
  );
}

/**
 * One group: in one transaction when the database takes every row of it. COPY refuses a group
 * whole for one row: an attempt stored already (a retried batch), or a value the database refuses
 * that validation let through. Each of its batches is then written on its own, so that a batch
 * fails only itself and never the other projects' beside it: a retried one with the insert that
 * skips what is stored, the others as a batch alone is. Never rejects: each batch's request is
 * answered.
 */
async function writeGroup(sql: Sql, group: PendingBatch[]): Promise<void> {
  try {
    const started = performance.now();
    const { refusals, limits } = await retryingConflicts(() => pipelinedTransaction(sql, (tx) => copyBatches(tx, group)));
    groupCommitSeconds.observe((performance.now() - started) / 1000);
    for (const batch of group) {
      const refusal = refusals.get(batch);
      if (refusal) batch.reject(refusal);
      else batch.resolve({ recorded: batch.attempts.length, maxFailures: limits.get(batch.runId) ?? null });
    }
  } catch (error) {
    const storedAlready = isStoredAlready(error);
    // Alone, a batch has had its answer; and an unreachable database refuses each batch alike.
    if ((group.length === 1 && !storedAlready) || isDatabaseUnavailable(error)) {
      for (const batch of group) batch.reject(error);
      return;
    }
    for (const batch of group) {
      await recordBatch(sql, batch, storedAlready ? 'insert' : 'copy').then(batch.resolve, batch.reject);
    }
  }
}
