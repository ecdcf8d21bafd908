import type { Tx } from '../db.ts';
import { TERMINAL_STATES } from '../states.ts';
import type { RetentionPolicy } from './schema.ts';

// The one module that writes `retention_policies`; it reads which runs the policy has expired.

/** The project's policy, or `defaults` (the server's) until it sets one. */
export async function getPolicy(sql: Tx, projectId: number, defaults: RetentionPolicy): Promise<RetentionPolicy> {
  const [row] = await sql<RetentionPolicy[]>`
    select results_days, artifacts_days from retention_policies where project_id = ${projectId}`;
  return row ?? defaults;
}

export async function putPolicy(sql: Tx, projectId: number, policy: RetentionPolicy, now: Date): Promise<RetentionPolicy> {
  const [row] = await sql<RetentionPolicy[]>`
    insert into retention_policies (project_id, results_days, artifacts_days, updated_at)
    values (${projectId}, ${policy.results_days}, ${policy.artifacts_days}, ${now})
    on conflict (project_id) do update set
      results_days = excluded.results_days, artifacts_days = excluded.artifacts_days, updated_at = excluded.updated_at
    returning results_days, artifacts_days`;
  return row as RetentionPolicy;
}

export async function projectIds(sql: Tx): Promise<number[]> {
  const rows = await sql<{ id: number }[]>`select id from projects order by id`;
  return rows.map((row) => row.id);
}

/** What the policy takes from a run: its details (results, listed tests and attachments) or its attachments alone. */
export type Expiry = 'details' | 'artifacts';

/**
 * The project's runs that ended before `cutoff` and still hold what `expiry` takes, oldest first,
 * at most `limit`: not pinned, ended, and already in the rollups (a run waiting for its rollup
 * keeps its results until they are counted). A run is created before it ends, so the partial
 * index's range on created_at bounds the scan.
 */
export async function expiredRuns(sql: Tx, projectId: number, expiry: Expiry, cutoff: Date, limit: number): Promise<number[]> {
  const kept = expiry === 'details' ? sql`r.details_deleted_at is null` : sql`r.artifacts_deleted_at is null`;
  const rows = await sql<{ id: number }[]>`
    select r.id from test_runs r
    where r.project_id = ${projectId} and ${kept} and r.created_at < ${cutoff}
      and not r.pinned and r.state in ${sql([...TERMINAL_STATES])} and coalesce(r.run_ended_at, r.created_at) < ${cutoff}
      and not exists (select 1 from rollup_queue q where q.test_run_id = r.id)
    order by r.created_at, r.id
    limit ${limit}`;
  return rows.map((row) => row.id);
}
