import type { Tx } from '../db.ts';

export type SyncState = 'pending' | 'running' | 'done' | 'failed';
/** `repository`: the test repository, the runner or Playwright's listing refused; `internal`: anything else. */
export type SyncFailure = 'repository' | 'internal';

export interface SyncJob {
  id: number;
  project_id: number;
  environment_id: number;
  state: SyncState;
  failure: SyncFailure | null;
  error: string | null;
}

const columns = (sql: Tx) => sql`id, project_id, environment_id, state, failure, error`;

/** The environment's open sync job, made when there is none: every request meanwhile shares it. */
export async function requestSync(sql: Tx, projectId: number, environmentId: number, now: Date): Promise<SyncJob> {
  for (;;) {
    const [made] = await sql<SyncJob[]>`
      insert into environment_syncs (project_id, environment_id, state, requested_at)
      values (${projectId}, ${environmentId}, 'pending', ${now})
      on conflict (environment_id) where state in ('pending', 'running') do nothing
      returning ${columns(sql)}`;
    if (made) return made;
    const [open] = await sql<SyncJob[]>`
      select ${columns(sql)} from environment_syncs where environment_id = ${environmentId} and state in ('pending', 'running')`;
    // The open job may have ended between the two statements: then make another.
    if (open) return open;
  }
}

export async function getSync(sql: Tx, id: number): Promise<SyncJob | null> {
  const [row] = await sql<SyncJob[]>`select ${columns(sql)} from environment_syncs where id = ${id}`;
  return row ?? null;
}

/** What a job needs to run: the environment and the project's test repository. */
export interface ClaimedSync extends SyncJob {
  /** Null when the project's repository was taken away after the sync was asked for. */
  repo_url: string | null;
}

/**
 * Takes the oldest pending sync, or one whose server stopped beating for `lostMs`. SKIP LOCKED lets
 * servers on one PostgreSQL claim side by side, and no job runs twice at once.
 */
export async function claimSync(sql: Tx, workerId: string, now: Date, lostMs: number): Promise<ClaimedSync | null> {
  const [row] = await sql<ClaimedSync[]>`
    with next as (
      select id from environment_syncs
      where state = 'pending' or (state = 'running' and heartbeat_at < ${new Date(now.getTime() - lostMs)})
      order by id for update skip locked limit 1
    ), claimed as (
      update environment_syncs s set state = 'running', claimed_by = ${workerId}, heartbeat_at = ${now}
      from next where s.id = next.id
      returning s.id, s.project_id, s.environment_id, s.state, s.failure, s.error
    )
    select c.*, p.repo_url from claimed c join projects p on p.id = c.project_id`;
  return row ?? null;
}

export async function beatSync(sql: Tx, id: number, now: Date): Promise<void> {
  await sql`update environment_syncs set heartbeat_at = ${now} where id = ${id} and state = 'running'`;
}

export async function finishSync(sql: Tx, id: number, outcome: { testCount: number } | { failure: SyncFailure; error: string }, now: Date): Promise<void> {
  const failed = 'failure' in outcome;
  await sql`
    update environment_syncs set
      state = ${failed ? 'failed' : 'done'}, failure = ${failed ? outcome.failure : null}, error = ${failed ? outcome.error : null},
      test_count = ${failed ? null : outcome.testCount}, finished_at = ${now}
    where id = ${id}`;
}
