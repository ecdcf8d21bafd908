import type { Tx } from '../db.ts';

// The jobs' own reads of runs (the tables runs/ writes): which shards of a run ended, which runs
// went silent. They write nothing.

/** The shards of the run that reported their end. */
export async function shardsEnded(sql: Tx, runId: number): Promise<Set<number>> {
  const rows = await sql<{ shard: number }[]>`select shard from test_run_shards where test_run_id = ${runId} and status is not null`;
  return new Set(rows.map((row) => row.shard));
}

/** Running runs from which nothing arrived since `cutoff`. */
export async function runsSilentSince(sql: Tx, cutoff: Date): Promise<{ id: number }[]> {
  return sql<{ id: number }[]>`
    select id from test_runs where state = 'running' and coalesce(last_activity_at, run_started_at, created_at) < ${cutoff}`;
}
