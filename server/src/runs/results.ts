import { copyRows, type CopyValue, pipelinedTransaction, type PipelinedWork, retryingConflicts, type Sql, takesCopyFromStdin, type Tx } from '../db.ts';
import { snoozedTestIdsOfRun } from '../snoozes/index.ts';
import type { Outcome } from '../states.ts';
import { lockOpenRun } from './ingest.ts';
import { addToCounts, type OutcomeCounts, outcomeCountColumns } from './record.ts';
import type { Attempt } from './schema.ts';

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

/** How a batch is written: COPY where the database speaks it, else the idempotent insert. */
export type ResultWrite = 'copy' | 'insert';

/**
 * A batch of attempts in its own transaction. COPY writes it fastest but refuses the whole batch
 * when one attempt is stored already, which is how a retried batch shows itself: it then takes
 * the insert that skips what is stored. `write` defaults to what the database takes. Returns how
 * many attempts were new.
 */
export async function recordResultBatch(
  sql: Sql,
  projectId: number,
  runId: number,
  shard: number,
  attempts: Attempt[],
  now: Date,
  write?: ResultWrite,
): Promise<number> {
  const copy = write ? write === 'copy' : await takesCopyFromStdin(sql);
  if (copy) {
    try {
      return await retryingConflicts(() => pipelinedTransaction(sql, (tx) => copyResults(tx, projectId, runId, shard, attempts, now)));
    } catch (error) {
      if (!isStoredAlready(error)) throw error;
    }
  }
  return retryingConflicts(() => sql.begin((tx) => insertResults(tx, projectId, runId, shard, attempts, now)));
}

/**
 * A batch of new attempts inside a transaction the caller holds (an upload's): COPY or the insert,
 * no retry. A COPY that meets a stored attempt fails the transaction.
 */
export async function writeResults(
  sql: Tx,
  projectId: number,
  runId: number,
  shard: number,
  attempts: Attempt[],
  now: Date,
  write: ResultWrite,
): Promise<void> {
  if (write === 'insert') {
    await insertResults(sql, projectId, runId, shard, attempts, now);
    return;
  }
  const work = await copyResults(sql, projectId, runId, shard, attempts, now);
  await work.last;
}

/** COPY's refusal of an attempt that is stored already: a retried batch. */
export function isStoredAlready(error: unknown): boolean {
  const pgError = error as { code?: string; constraint_name?: string };
  return pgError?.code === '23505' && pgError.constraint_name === 'test_results_pkey';
}

/** The run, locked for a batch, and which of the batch's failing tests a snooze covers: one round trip. */
async function openRunAndSnoozes(sql: Tx, projectId: number, runId: number, attempts: Attempt[], now: Date): Promise<ReadonlySet<string>> {
  const failing = attempts.filter((a) => a.final?.outcome === 'unexpected').map((a) => a.test_id);
  const [, snoozed] = await Promise.all([lockOpenRun(sql, projectId, runId, 'batch'), snoozedTestIdsOfRun(sql, projectId, runId, failing, now)]);
  return snoozed;
}

/**
 * Every attempt of the batch new: one COPY, and the run's counts moved by all its finals in the
 * statement that goes out with COMMIT.
 */
async function copyResults(sql: Tx, projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<PipelinedWork<number>> {
  const snoozed = await openRunAndSnoozes(sql, projectId, runId, attempts, now);
  const rows = attempts.map((a) => resultRow(runId, shard, a, snoozed));
  await copyRows(sql, 'test_results', RESULT_COLUMNS, rows);
  const last = addToCounts(sql, runId, tallyOutcomes(rows), now);
  return { result: attempts.length, last };
}

/**
 * A batch of attempts in one statement: every attempt inserted, idempotent per (run, test, retry),
 * the final attempts carrying their outcome with snoozes applied as they are recorded, and the
 * run's counts moved by the finals that were new. Returns how many attempts were new.
 */
export async function insertResults(sql: Tx, projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<number> {
  const snoozed = await openRunAndSnoozes(sql, projectId, runId, attempts, now);
  const rows = attempts.map((a) => resultRow(runId, shard, a, snoozed));
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
    counted as (${addToCounts(sql, runId, 'counts', now)})
    select recorded from counts`;
  return result?.recorded ?? 0;
}
