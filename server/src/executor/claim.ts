import type { Tx } from '../db.ts';
import type { Trigger } from '../runs/schema.ts';

export interface ClaimedRun {
  id: number;
  project_id: number;
  environment_id: number;
  total_shards: number;
  test_run_branch: string | null;
  build: Trigger['build'] | null;
  build_branch: string | null;
  environment_variables_overrides: { name: string; value: string }[];
  tags: string[];
  test_case_ids: string[];
  repo_url: string;
  runner_projects_match: string[];
  runner_projects_ignore: string[];
  env_files: string[];
}

/**
 * Takes the oldest pending run for this executor. SKIP LOCKED lets several server processes on
 * one PostgreSQL claim side by side, and no run is claimed twice.
 */
export async function claimRun(sql: Tx, workerId: string, now: Date): Promise<ClaimedRun | null> {
  const [run] = await sql<ClaimedRun[]>`
    with next as (
      select id from test_runs where state = 'pending' order by id for update skip locked limit 1
    ), claimed as (
      update test_runs r set state = 'queued', claimed_by = ${workerId}, heartbeat_at = ${now}, queued_at = ${now},
                             executions = r.executions + 1
      from next where r.id = next.id
      returning r.id, r.project_id, r.environment_id, r.total_shards, r.test_run_branch, r.build, r.build_branch,
                r.environment_variables_overrides, r.tags, r.test_case_ids
    )
    select c.*, p.repo_url, e.runner_projects_match, e.runner_projects_ignore, e.env_files
    from claimed c join projects p on p.id = c.project_id join environments e on e.id = c.environment_id`;
  return run ?? null;
}

/** Keeps the claim alive; returns the run's state so that a cancel made elsewhere is noticed. */
export async function heartbeat(sql: Tx, runId: number, now: Date): Promise<string | null> {
  const [row] = await sql<{ state: string }[]>`update test_runs set heartbeat_at = ${now} where id = ${runId} returning state`;
  return row?.state ?? null;
}

/** Runs whose executor stopped beating (its server died): they end as `error`. */
export async function lostRunIds(sql: Tx, now: Date, staleMs: number): Promise<number[]> {
  const rows = await sql<{ id: number }[]>`
    select id from test_runs
    where state in ('queued', 'running') and claimed_by is not null and heartbeat_at < ${new Date(now.getTime() - staleMs)}`;
  return rows.map((row) => row.id);
}
