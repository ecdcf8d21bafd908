import type { Sql, Tx } from '../db.ts';

// The one module that writes `rollup_queue`: runs that have ended and wait for their rollup.

/** The run has ended: a job adds it to the rollups right after (`rollUpNext`). In the transaction that ends it. */
export async function enqueueRollup(sql: Tx, runId: number, projectId: number, now: Date): Promise<void> {
  await sql`insert into rollup_queue (test_run_id, project_id, queued_at) values (${runId}, ${projectId}, ${now}) on conflict do nothing`;
}

/** The oldest waiting run that no other process has taken, locked until the transaction ends; null when none waits. */
export async function takeQueued(sql: Tx): Promise<number | null> {
  const [next] = await sql<{ test_run_id: number }[]>`
    select test_run_id from rollup_queue order by test_run_id for update skip locked limit 1`;
  return next?.test_run_id ?? null;
}

export async function removeQueued(sql: Tx, runId: number): Promise<void> {
  await sql`delete from rollup_queue where test_run_id = ${runId}`;
}

/**
 * Before a project's rollups are rebuilt from its results, which count every ended run after
 * `horizon` (a day; null: every day): its waiting runs of those days are dropped, and runs that
 * end meanwhile wait to enter the queue until the rebuild commits (so that none is counted twice
 * or missed). Take it before the rollup tables' locks.
 */
export async function dropQueuedForRebuild(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  await sql`lock table rollup_queue in exclusive mode`;
  await sql`
    delete from rollup_queue q using test_runs r
    where q.project_id = ${projectId} and r.id = q.test_run_id
      ${horizon === null ? sql`` : sql`and (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date > ${horizon}::date`}`;
}

/** How many ended runs wait for their rollup. */
export async function queuedRollups(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from rollup_queue`;
  return row?.n ?? 0;
}
