import { copyRows, type CopyValue, pipelinedTransaction, type PipelinedWork, type Sql, takesCopyFromStdin, type Tx } from '../db.ts';
import { snoozedTestIdsOfRun } from '../snoozes/store.ts';
import type { Outcome } from '../states.ts';
import { lockOpenRun } from './ingest.ts';
import { addToCounts } from './record.ts';
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

/**
 * An attempt as its row is written, in short keys with no null or false fields and the start as
 * epoch milliseconds: PostgreSQL's JSON parsing is what ingestion is bound by, and a missing key
 * reads as null.
 */
function compactRow(a: Attempt, snoozed: ReadonlySet<string>): Record<string, string | number | boolean> {
  const row: Record<string, string | number | boolean> = { i: a.test_id, r: a.retry, s: a.status, d: a.duration };
  if (a.error_message !== null) row.em = a.error_message;
  if (a.error_location !== null) row.el = a.error_location;
  if (a.stdout_tail !== null) row.so = a.stdout_tail;
  if (a.stderr_tail !== null) row.se = a.stderr_tail;
  if (a.started_at !== null) row.t = Date.parse(a.started_at);
  if (a.final) {
    const outcome = finalStatus(a.final.outcome);
    row.f = true;
    row.o = outcome;
    if (outcome === 'failed' && snoozed.has(a.test_id)) row.z = true;
    row.td = a.final.total_duration;
    if (a.final.error_message !== null) row.fe = a.final.error_message;
    if (a.final.failure_group_id !== null) row.g = a.final.failure_group_id;
  }
  return row;
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
      return await pipelinedTransaction(sql, (tx) => copyResults(tx, projectId, runId, shard, attempts, now));
    } catch (error) {
      if (!isStoredAlready(error)) throw error;
    }
  }
  return sql.begin((tx) => insertResults(tx, projectId, runId, shard, attempts, now));
}

function isStoredAlready(error: unknown): boolean {
  const pgError = error as { code?: string; constraint_name?: string };
  return pgError?.code === '23505' && pgError.constraint_name === 'test_results_pkey';
}

/** The run, locked for a batch, and which of the batch's failing tests a snooze covers: one round trip. */
async function openRunAndSnoozes(sql: Tx, projectId: number, runId: number, attempts: Attempt[], now: Date): Promise<ReadonlySet<string>> {
  const failing = attempts.filter((a) => a.final?.outcome === 'unexpected').map((a) => a.test_id);
  const [, snoozed] = await Promise.all([
    lockOpenRun(sql, projectId, runId, 'batch'),
    snoozedTestIdsOfRun(sql, projectId, runId, failing, now),
  ]);
  return snoozed;
}

const RESULT_COLUMNS = [
  'test_run_id', 'test_case_id', 'retry', 'shard', 'status', 'duration', 'error_message', 'error_location', 'stdout_tail',
  'stderr_tail', 'started_at', 'is_final', 'outcome', 'snoozed', 'total_duration', 'final_error_message', 'failure_group_id',
] as const;

/**
 * Every attempt of the batch new: one COPY, and the run's counts moved by all its finals in the
 * statement that goes out with COMMIT.
 */
async function copyResults(sql: Tx, projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<PipelinedWork<number>> {
  const snoozed = await openRunAndSnoozes(sql, projectId, runId, attempts, now);
  const counts = { passed: 0, failed: 0, flaky: 0, skipped: 0, snoozed: 0 };
  const rows = attempts.map((a): CopyValue[] => {
    const outcome = a.final ? finalStatus(a.final.outcome) : null;
    const isSnoozed = outcome === 'failed' && snoozed.has(a.test_id);
    if (outcome) counts[outcome]++;
    if (isSnoozed) counts.snoozed++;
    return [
      runId, a.test_id, a.retry, shard, a.status, a.duration, a.error_message, a.error_location, a.stdout_tail, a.stderr_tail,
      a.started_at, a.final !== null, outcome, isSnoozed, a.final?.total_duration ?? null, a.final?.error_message ?? null,
      a.final?.failure_group_id ?? null,
    ];
  });
  await copyRows(sql, 'test_results', RESULT_COLUMNS, rows);
  const last = addToCounts(sql, runId, counts, now);
  return { result: attempts.length, last };
}

/**
 * A batch of attempts in one statement: every attempt inserted, idempotent per (run, test, retry),
 * the final attempts carrying their outcome with snoozes applied as they are recorded, and the
 * run's counts moved by the finals that were new. Returns how many attempts were new.
 */
export async function insertResults(sql: Tx, projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<number> {
  const snoozed = await openRunAndSnoozes(sql, projectId, runId, attempts, now);
  const rows = attempts.map((a) => compactRow(a, snoozed));
  const [result] = await sql<{ recorded: number }[]>`
    with inserted as (
      insert into test_results (test_run_id, test_case_id, retry, shard, status, duration, error_message, error_location,
                                stdout_tail, stderr_tail, started_at, is_final, outcome, snoozed, total_duration,
                                final_error_message, failure_group_id)
      select ${runId}, x.i, x.r, ${shard}, x.s, x.d, x.em, x.el, x.so, x.se, to_timestamp(x.t / 1000.0),
             coalesce(x.f, false), x.o, coalesce(x.z, false), x.td, x.fe, x.g
      from json_to_recordset(${JSON.stringify(rows)}::text::json) as x(i text, r int, s text, d int, em text, el text,
           so text, se text, t float8, f boolean, o text, z boolean, td int, fe text, g text)
      on conflict (test_run_id, test_case_id, retry) do nothing
      returning outcome, snoozed
    ),
    counts as (
      select count(*)::int as recorded,
             count(*) filter (where outcome = 'passed')::int as passed,
             count(*) filter (where outcome = 'failed')::int as failed,
             count(*) filter (where outcome = 'flaky')::int as flaky,
             count(*) filter (where outcome = 'skipped')::int as skipped,
             count(*) filter (where snoozed)::int as snoozed
      from inserted
    ),
    counted as (${addToCounts(sql, runId, { relation: 'counts' }, now)})
    select recorded from counts`;
  return result?.recorded ?? 0;
}
