import { copyRows, type CopyValue, pipelinedTransaction, type PipelinedWork, retryingConflicts, type Sql, takesCopyFromStdin, type Tx } from '../db.ts';
import type { NotFoundError, RunEndedError } from '../errors.ts';
import { snoozedTestIdsOfRun } from '../snoozes/index.ts';
import type { Outcome } from '../states.ts';
import { type BatchRun, closedRunRefusal, lockRunsForBatches } from './open-run.ts';
import { addToCounts, type OutcomeCounts, outcomeCountColumns } from './record.ts';
import type { Attempt } from './schema.ts';

// The one writer of `test_results`: a batch of a reporter's attempts, a group of such batches that
// arrived together (group commit), or an upload's, by one COPY or by the idempotent insert. Every
// path locks its runs, applies snoozes and moves the runs' counts here, the same way.

/** A batch of attempts of one shard of a run, as a request hands it over. */
export interface ResultBatch {
  projectId: number;
  runId: number;
  shard: number;
  attempts: Attempt[];
  now: Date;
}

function finalStatus(outcome: NonNullable<Attempt['final']>['outcome']): Outcome {
  switch (outcome) {
    case 'expected':
      return 'passed';
    case 'unexpected':
      return 'failed';
    case 'flaky':
      return 'flaky';
    case 'skipped':
      return 'skipped';
  }
}

/** The columns of a `test_results` row with their types, in the order `resultRow` gives its values. */
const RESULT_COLUMN_TYPES = {
  test_run_id: 'int',
  test_case_id: 'text',
  retry: 'int',
  shard: 'int',
  status: 'text',
  duration: 'int',
  error_message: 'text',
  error_location: 'text',
  stdout_tail: 'text',
  stderr_tail: 'text',
  started_at: 'timestamptz',
  is_final: 'boolean',
  outcome: 'text',
  snoozed: 'boolean',
  total_duration: 'int',
  final_error_message: 'text',
  failure_group_id: 'text',
  skip_reason: 'text',
  failed_steps: 'jsonb',
  stack_frames: 'jsonb',
  parallel_index: 'int',
} as const;
export const RESULT_COLUMNS = Object.keys(RESULT_COLUMN_TYPES) as (keyof typeof RESULT_COLUMN_TYPES)[];
/** The insert's column list and its reading of `resultRow`'s values back from a JSON array `r`: from the constants above alone. */
const RESULT_COLUMN_LIST = RESULT_COLUMNS.join(', ');
const READ_RESULT_ROW = RESULT_COLUMNS.map((column, i) => `(r->>${i})::${RESULT_COLUMN_TYPES[column]}`).join(', ');
const OUTCOME = RESULT_COLUMNS.indexOf('outcome');
const SNOOZED = RESULT_COLUMNS.indexOf('snoozed');

/**
 * The one encoding of a result row: an attempt as its values in `RESULT_COLUMNS` order, the final
 * attempt carrying the test's outcome (a failure a snooze covers marked so). COPY writes these
 * values, the insert reads them back from JSON, and the benches load them.
 */
export function resultRow(runId: number, shard: number, a: Attempt, snoozed: ReadonlySet<string>): CopyValue[] {
  const outcome = a.final ? finalStatus(a.final.outcome) : null;
  return [
    runId,
    a.test_id,
    a.retry,
    shard,
    a.status,
    a.duration,
    a.error_message,
    a.error_location,
    a.stdout_tail,
    a.stderr_tail,
    a.started_at,
    a.final !== null,
    outcome,
    outcome === 'failed' && snoozed.has(a.test_id),
    a.final?.total_duration ?? null,
    a.final?.error_message ?? null,
    a.final?.failure_group_id ?? null,
    a.final?.outcome === 'skipped' ? (a.final.skip_reason ?? null) : null,
    a.final?.failed_steps && a.final.failed_steps.length > 0 ? JSON.stringify(a.final.failed_steps) : null,
    a.final?.stack_frames && a.final.stack_frames.length > 0 ? JSON.stringify(a.final.stack_frames) : null,
    a.parallel_index ?? null,
  ];
}

/** What the final attempts among `rows` add to their run's counts. */
export function tallyOutcomes(rows: readonly CopyValue[][]): OutcomeCounts {
  const counts: OutcomeCounts = { passed: 0, failed: 0, flaky: 0, skipped: 0, snoozed: 0 };
  for (const row of rows) {
    const outcome = row[OUTCOME] as Outcome | null;
    if (outcome) counts[outcome]++;
    if (row[SNOOZED]) counts.snoozed++;
  }
  return counts;
}

/**
 * A batch written: how many of its attempts were new, and its run's fail-fast limit (null: none),
 * read from the run's row as the batch locked it, so that fail fast asks nothing of a run without one.
 */
export interface Recorded {
  recorded: number;
  maxFailures: number | null;
}

/** How a batch is written: COPY where the database speaks it, else the idempotent insert. */
export type ResultWrite = 'copy' | 'insert';

/** Why a batch's run takes no results (none in its project, or ended). */
type Refusal = NotFoundError | RunEndedError;

/**
 * A batch of attempts in its own transaction. COPY writes it fastest but refuses the whole batch
 * when one attempt is stored already, which is how a retried batch shows itself: it then takes
 * the insert that skips what is stored. `write` defaults to what the database takes. Returns how
 * many attempts were new, and the run's fail-fast limit.
 */
export async function recordBatch(sql: Sql, batch: ResultBatch, write?: ResultWrite): Promise<Recorded> {
  const copy = write ? write === 'copy' : await takesCopyFromStdin(sql);
  if (copy) {
    try {
      const copied = await retryingConflicts(() => pipelinedTransaction(sql, (tx) => copyBatches(tx, [batch])));
      const refusal = copied.refusals.get(batch);
      if (refusal) throw refusal;
      return { recorded: batch.attempts.length, maxFailures: copied.limits.get(batch.runId) ?? null };
    } catch (error) {
      if (!isStoredAlready(error)) throw error;
    }
  }
  return retryingConflicts(() => sql.begin((tx) => insertBatch(tx, batch)));
}

/**
 * A batch of new attempts inside a transaction the caller holds (an upload's): COPY or the insert,
 * no retry. A COPY that meets a stored attempt fails the transaction.
 */
export async function writeResults(sql: Tx, batch: ResultBatch, write: ResultWrite): Promise<void> {
  if (write === 'insert') {
    await insertResults(sql, batch);
    return;
  }
  const work = await copyBatches(sql, [batch]);
  const refusal = work.result.refusals.get(batch);
  if (refusal) throw refusal;
  await work.last;
}

/** COPY's refusal of an attempt that is stored already: a retried batch. */
export function isStoredAlready(error: unknown): boolean {
  const pgError = error as { code?: string; constraint_name?: string };
  return pgError?.code === '23505' && pgError.constraint_name === 'test_results_pkey';
}

/**
 * The batches' runs locked, in the order of their ids (key share: batches of a run write side by
 * side, a run's end waits for them), and which of each batch's failing tests a snooze covers, in
 * one round trip; a batch whose run is not its project's or has ended is refused.
 */
async function openRunsAndSnoozes(
  sql: Tx,
  batches: readonly ResultBatch[],
): Promise<{ snoozed: ReadonlySet<string>[]; refusals: Map<ResultBatch, Refusal>; limits: Map<number, number | null> }> {
  const [runs, snoozed] = await Promise.all([
    lockRunsForBatches(sql, [...new Set(batches.map((batch) => batch.runId))]),
    Promise.all(batches.map((batch) => snoozedTestIdsOfRun(sql, batch.projectId, batch.runId, failingTestIds(batch), batch.now))),
  ]);
  const runById = new Map<number, BatchRun>(runs.map((run) => [run.id, run]));
  const refusals = new Map<ResultBatch, Refusal>();
  for (const batch of batches) {
    const run = runById.get(batch.runId);
    // A run of another project is, for this project, no run at all.
    const refusal = closedRunRefusal(run?.project_id === batch.projectId ? run : undefined, batch.runId);
    if (refusal) refusals.set(batch, refusal);
  }
  const limits = new Map(runs.map((run) => [run.id, run.max_failures]));
  return { snoozed, refusals, limits };
}

function failingTestIds(batch: ResultBatch): string[] {
  return batch.attempts.filter((a) => a.final?.outcome === 'unexpected').map((a) => a.test_id);
}

/**
 * Batches whose attempts are all new, in one COPY: the refused ones (their run closed or not
 * theirs) left out and named. Each run's counts move in the statements that go out with COMMIT, in
 * the order of the run ids, as their locks were taken.
 */
export async function copyBatches(
  tx: Tx,
  batches: readonly ResultBatch[],
): Promise<PipelinedWork<{ refusals: Map<ResultBatch, Refusal>; limits: Map<number, number | null> }>> {
  const { snoozed, refusals, limits } = await openRunsAndSnoozes(tx, batches);
  const rowsByRun = new Map<number, CopyValue[][]>();
  batches.forEach((batch, i) => {
    if (refusals.has(batch)) return;
    const rows = batch.attempts.map((attempt) => resultRow(batch.runId, batch.shard, attempt, snoozed[i] as ReadonlySet<string>));
    const ofRun = rowsByRun.get(batch.runId);
    if (ofRun) ofRun.push(...rows);
    else rowsByRun.set(batch.runId, rows);
  });
  if (rowsByRun.size === 0) return { result: { refusals, limits }, last: tx`select 1` };
  await copyRows(tx, 'test_results', RESULT_COLUMNS, [...rowsByRun.values()].flat());
  const latest = new Date(Math.max(...batches.map((batch) => batch.now.getTime())));
  const counted = [...rowsByRun.entries()].sort(([a], [b]) => a - b).map(([runId, rows]) => addToCounts(tx, runId, tallyOutcomes(rows), latest));
  return { result: { refusals, limits }, last: Promise.all(counted) };
}

/**
 * A batch of attempts in one statement: every attempt inserted, idempotent per (run, test, retry),
 * the final attempts carrying their outcome with snoozes applied as they are recorded, and the
 * run's counts moved by the finals that were new. Returns how many attempts were new.
 */
export async function insertResults(sql: Tx, batch: ResultBatch): Promise<number> {
  return (await insertBatch(sql, batch)).recorded;
}

/** `insertResults`, with its run's fail-fast limit. */
async function insertBatch(sql: Tx, batch: ResultBatch): Promise<Recorded> {
  const { snoozed, refusals, limits } = await openRunsAndSnoozes(sql, [batch]);
  const refusal = refusals.get(batch);
  if (refusal) throw refusal;
  const rows = batch.attempts.map((a) => resultRow(batch.runId, batch.shard, a, snoozed[0] as ReadonlySet<string>));
  const [result] = await sql<{ recorded: number }[]>`
    with inserted as (
      insert into test_results (${sql.unsafe(RESULT_COLUMN_LIST)})
      select ${sql.unsafe(READ_RESULT_ROW)}
      from json_array_elements(${JSON.stringify(rows)}::text::json) as r
      on conflict (test_run_id, test_case_id, retry) do nothing
      returning outcome, snoozed
    ),
    counts as (
      select count(*)::int as recorded, ${outcomeCountColumns(sql)} from inserted
    ),
    counted as (${addToCounts(sql, batch.runId, 'counts', batch.now)})
    select recorded from counts`;
  return { recorded: result?.recorded ?? 0, maxFailures: limits.get(batch.runId) ?? null };
}

/**
 * The attempts of a run's tests that have no final attempt: what a lost executor left half done.
 * The run that takes over runs those tests again from their first attempt.
 */
export async function dropUnfinishedAttempts(sql: Tx, runId: number): Promise<void> {
  await sql`
    delete from test_results t
    where t.test_run_id = ${runId}
      and not exists (select 1 from test_results f where f.test_run_id = t.test_run_id and f.test_case_id = t.test_case_id and f.is_final)`;
}
