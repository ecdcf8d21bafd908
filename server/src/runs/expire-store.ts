import type { Tx } from '../db.ts';

// What the retention pass takes away of a run: its results and listed tests, in bounded chunks.
// The run keeps its row and counts; record.ts marks it.

/** Results (and listed tests) deleted in one statement: short transactions that leave ingestion be. */
export const DETAILS_CHUNK = 5000;

/**
 * Deletes up to `limit` of the run's results and up to `limit` of its listed tests. Returns how
 * many of each went: fewer than `limit` of both and the run holds none.
 */
export async function deleteDetailsChunk(sql: Tx, runId: number, limit = DETAILS_CHUNK): Promise<{ results: number; tests: number }> {
  const results = await sql`
    delete from test_results where (test_run_id, test_case_id, retry) in (
      select test_run_id, test_case_id, retry from test_results where test_run_id = ${runId} limit ${limit})`;
  const tests = await sql`
    delete from test_run_tests where (test_run_id, test_case_id) in (
      select test_run_id, test_case_id from test_run_tests where test_run_id = ${runId} limit ${limit})`;
  return { results: results.count, tests: tests.count };
}

/** How many results these runs hold. */
export async function countResults(sql: Tx, runIds: number[]): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::float8 as n from test_results where test_run_id = any(${runIds}::int[])`;
  return row?.n ?? 0;
}

/**
 * Holds the run against a pin, and against another node's retention pass, until the transaction
 * ends; false when it is pinned (or gone), or when what `expiry` takes is gone already: the passes
 * of several nodes sharing the database delete and count a run once between them.
 */
export async function lockUnpinned(sql: Tx, runId: number, expiry: 'details' | 'artifacts'): Promise<boolean> {
  const kept = expiry === 'details' ? sql`details_deleted_at is null` : sql`artifacts_deleted_at is null`;
  const rows = await sql`select 1 from test_runs where id = ${runId} and not pinned and ${kept} for no key update`;
  return rows.length > 0;
}
