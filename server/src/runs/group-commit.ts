import {
  copyRows,
  type CopyValue,
  isDatabaseUnavailable,
  pipelinedTransaction,
  type PipelinedWork,
  retryingConflicts,
  type Sql,
  takesCopyFromStdin,
  type Tx,
} from '../db.ts';
import { snoozedTestIdsOfRun } from '../snoozes/index.ts';
import type { RunState } from '../states.ts';
import { closedRunRefusal } from './ingest.ts';
import { addToCounts } from './record.ts';
import { isStoredAlready, recordResultBatch, RESULT_COLUMNS, resultRow, tallyOutcomes } from './results.ts';
import type { Attempt } from './schema.ts';

// Group commit. A reporter sends a batch a second per shard, often of one or two attempts: at a
// thousand shards the cost is per request (a transaction, its COMMIT's flush to disk, half a dozen
// socket writes), not per attempt. Batches that arrive while earlier ones are being written wait
// and are written together: one transaction, one COPY, one COMMIT. Each request is answered once
// its own rows are committed, as before; an idle server writes each batch at once, alone.

/** A batch of attempts as a request hands it over, and how its request is answered. */
interface PendingBatch {
  projectId: number;
  runId: number;
  shard: number;
  attempts: Attempt[];
  now: Date;
  resolve: (recorded: number) => void;
  reject: (error: unknown) => void;
}

export interface ResultWriter {
  /** Records a batch of attempts of a run; resolves with how many were new once they are committed. */
  record(projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<number>;
}

/** Groups being written at once: the second fills while the first commits. */
const CONCURRENT_GROUPS = 2;
/** A group's size in attempts: a transaction and a COPY of bounded size, whatever the queue. */
const GROUP_ATTEMPTS = 5000;

/**
 * How a server writes result batches: grouped (`PROCTOR_GROUP_COMMIT`, on by default) where the
 * database takes COPY, else each batch in a transaction of its own. The database is asked on the
 * first batch, not at start.
 */
export function resultWriter(sql: Sql, groupCommit: boolean): ResultWriter {
  let grouped: Promise<ResultWriter | null> | null = null;
  return {
    record: async (projectId, runId, shard, attempts, now) => {
      grouped ??= groupCommit ? takesCopyFromStdin(sql).then((copy) => (copy ? groupCommitWriter(sql) : null)) : Promise.resolve(null);
      const writer = await grouped;
      return writer ? writer.record(projectId, runId, shard, attempts, now) : recordResultBatch(sql, projectId, runId, shard, attempts, now);
    },
  };
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

  return {
    record: (projectId, runId, shard, attempts, now) =>
      new Promise<number>((resolve, reject) => {
        waiting.push({ projectId, runId, shard, attempts, now, resolve, reject });
        schedule();
      }),
  };
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
    const accepted = await retryingConflicts(() => pipelinedTransaction(sql, (tx) => copyGroup(tx, group)));
    for (const batch of accepted) batch.resolve(batch.attempts.length);
  } catch (error) {
    const storedAlready = isStoredAlready(error);
    // Alone, a batch has had its answer; and an unreachable database refuses each batch alike.
    if ((group.length === 1 && !storedAlready) || isDatabaseUnavailable(error)) {
      for (const batch of group) batch.reject(error);
      return;
    }
    for (const batch of group) {
      await recordResultBatch(sql, batch.projectId, batch.runId, batch.shard, batch.attempts, batch.now, storedAlready ? 'insert' : 'copy').then(
        batch.resolve,
        batch.reject,
      );
    }
  }
}

interface GroupRun {
  id: number;
  project_id: number;
  state: RunState;
}

/**
 * The group's runs locked as one batch locks its run (key share: batches of a run write side by
 * side, a run's end waits for them), in the order of their ids; the batches whose run is not the
 * project's or has ended are refused, and the others' attempts go in with one COPY. Each run's counts
 * move in the statements that go out with COMMIT, in the order of the run ids (two groups that
 * share runs take their locks in the same order, and never wait on each other in a circle).
 */
async function copyGroup(tx: Tx, group: PendingBatch[]): Promise<PipelinedWork<PendingBatch[]>> {
  const runIds = [...new Set(group.map((batch) => batch.runId))];
  const [runs, snoozed] = await Promise.all([
    tx<GroupRun[]>`select id, project_id, state from test_runs where id = any(${runIds}::int[]) order by id for key share`,
    Promise.all(group.map((batch) => snoozedTestIdsOfRun(tx, batch.projectId, batch.runId, failingTestIds(batch), batch.now))),
  ]);
  const runById = new Map(runs.map((run) => [run.id, run]));
  const accepted: PendingBatch[] = [];
  const rowsByRun = new Map<number, CopyValue[][]>();
  group.forEach((batch, i) => {
    const run = runById.get(batch.runId);
    // A run of another project is, for this project, no run at all.
    const refusal = closedRunRefusal(run?.project_id === batch.projectId ? run : undefined, batch.runId);
    if (refusal) return batch.reject(refusal);
    accepted.push(batch);
    const rows = batch.attempts.map((attempt) => resultRow(batch.runId, batch.shard, attempt, snoozed[i] as ReadonlySet<string>));
    const ofRun = rowsByRun.get(batch.runId);
    if (ofRun) ofRun.push(...rows);
    else rowsByRun.set(batch.runId, rows);
  });
  if (accepted.length > 0) await copyRows(tx, 'test_results', RESULT_COLUMNS, [...rowsByRun.values()].flat());
  const latest = new Date(Math.max(...group.map((batch) => batch.now.getTime())));
  const counted = [...rowsByRun.entries()].sort(([a], [b]) => a - b).map(([runId, rows]) => addToCounts(tx, runId, tallyOutcomes(rows), latest));
  return { result: accepted, last: counted.length > 0 ? Promise.all(counted) : tx`select 1` };
}

function failingTestIds(batch: PendingBatch): string[] {
  return batch.attempts.filter((a) => a.final?.outcome === 'unexpected').map((a) => a.test_id);
}
