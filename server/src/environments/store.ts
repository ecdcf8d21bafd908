import type { OrderStrategy } from '@proctor/reporter/runs/order';
import type { Tx } from '../db.ts';
import { ConflictError } from '../errors.ts';
import type { CreateEnvironment, UpdateEnvironment } from './schema.ts';

// The one module that writes `environments` and `environment_syncs`.

export interface EnvironmentRow {
  id: number;
  project_id: number;
  slug: string;
  name: string;
  runner_projects_match: string[];
  runner_projects_ignore: string[];
  is_disabled: boolean | null;
  env_files: string[];
  runner_projects: string[];
  scheduled_trigger: string | null;
  burn_in_repeats: number;
  playwright_args: string[];
  max_failures: number | null;
  order_strategy: OrderStrategy;
  /** Affected runs: every N-th affected run in a row runs every test; null: never forced. */
  full_run_every: number | null;
  created_at: Date;
  updated_at: Date;
}

const columns = (sql: Tx) =>
  sql`id, project_id, slug, name, runner_projects_match, runner_projects_ignore, is_disabled, env_files, runner_projects,
      scheduled_trigger, burn_in_repeats, playwright_args, max_failures, order_strategy, full_run_every, created_at, updated_at`;

/** Slugs are unique in a project. */
export class SlugTakenError extends ConflictError {
  constructor(slug: string) {
    super(`slug: an environment with slug "${slug}" already exists in this project`);
  }
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

export async function createEnvironment(sql: Tx, projectId: number, input: CreateEnvironment): Promise<EnvironmentRow> {
  try {
    const [row] = await sql<EnvironmentRow[]>`
      insert into environments (project_id, slug, name, runner_projects_match, runner_projects_ignore, scheduled_trigger, burn_in_repeats, playwright_args,
                                max_failures, order_strategy, full_run_every)
      values (${projectId}, ${input.slug}, ${input.name}, ${input.runner_projects_match}, ${input.runner_projects_ignore},
              ${input.scheduled_trigger}, ${input.burn_in_repeats}, ${input.playwright_args}, ${input.max_failures}, ${input.order_strategy},
              ${input.full_run_every ?? null})
      returning ${columns(sql)}`;
    return row as EnvironmentRow;
  } catch (error) {
    if (isUniqueViolation(error)) throw new SlugTakenError(input.slug);
    throw error;
  }
}

/**
 * An environment of `slug` named by its slug, with every other field its default; null when the
 * project has one of that slug already (another shard made it at the same moment).
 */
export async function createEnvironmentOfSlug(sql: Tx, projectId: number, slug: string): Promise<EnvironmentRow | null> {
  const [row] = await sql<EnvironmentRow[]>`
    insert into environments (project_id, slug, name) values (${projectId}, ${slug}, ${slug})
    on conflict (project_id, slug) do nothing
    returning ${columns(sql)}`;
  return row ?? null;
}

export async function getEnvironment(sql: Tx, projectId: number, id: number): Promise<EnvironmentRow | null> {
  const [row] = await sql<EnvironmentRow[]>`
    select ${columns(sql)} from environments where project_id = ${projectId} and id = ${id}`;
  return row ?? null;
}

export async function getEnvironmentBySlug(sql: Tx, projectId: number, slug: string): Promise<EnvironmentRow | null> {
  const [row] = await sql<EnvironmentRow[]>`
    select ${columns(sql)} from environments where project_id = ${projectId} and slug = ${slug}`;
  return row ?? null;
}

export async function listEnvironments(sql: Tx, projectId: number, limit: number, offset: number): Promise<{ rows: EnvironmentRow[]; total: number }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from environments where project_id = ${projectId}`;
  const rows = await sql<EnvironmentRow[]>`
    select ${columns(sql)} from environments where project_id = ${projectId}
    order by id limit ${limit} offset ${offset}`;
  return { rows, total: count?.total ?? 0 };
}

export async function updateEnvironment(sql: Tx, projectId: number, id: number, patch: UpdateEnvironment): Promise<EnvironmentRow | null> {
  const fields = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  if (Object.keys(fields).length === 0) return getEnvironment(sql, projectId, id);
  try {
    const [row] = await sql<EnvironmentRow[]>`
      update environments set ${sql(fields)}, updated_at = now()
      where project_id = ${projectId} and id = ${id}
      returning ${columns(sql)}`;
    return row ?? null;
  } catch (error) {
    if (isUniqueViolation(error)) throw new SlugTakenError(String(patch.slug));
    throw error;
  }
}

export async function deleteEnvironment(sql: Tx, projectId: number, id: number): Promise<boolean> {
  const rows = await sql`delete from environments where project_id = ${projectId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** What a sync read from the test repository: its runner projects and env files. */
export async function recordRepositoryListing(sql: Tx, environmentId: number, runnerProjects: string[], envFiles: string[], now: Date): Promise<void> {
  await sql`
    update environments set runner_projects = ${runnerProjects}, env_files = ${envFiles}, updated_at = ${now}
    where id = ${environmentId}`;
}

/** The environments a schedule triggers: a schedule set, not disabled, of a project with a test repository. */
export async function scheduledEnvironments(sql: Tx): Promise<{ id: number; project_id: number; scheduled_trigger: string; created_at: Date }[]> {
  return sql<{ id: number; project_id: number; scheduled_trigger: string; created_at: Date }[]>`
    select e.id, e.project_id, e.scheduled_trigger, e.created_at from environments e join projects p on p.id = e.project_id
    where e.scheduled_trigger is not null and e.is_disabled is not true and p.repo_url is not null`;
}

// Sync jobs (`environment_syncs`): reading an environment's runner projects and env files from the
// test repository, in a server that executes runs.

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

const syncColumns = (sql: Tx) => sql`id, project_id, environment_id, state, failure, error`;

/** The environment's open sync job, made when there is none: every request meanwhile shares it. */
export async function requestSync(sql: Tx, projectId: number, environmentId: number, now: Date): Promise<SyncJob> {
  for (;;) {
    const [made] = await sql<SyncJob[]>`
      insert into environment_syncs (project_id, environment_id, state, requested_at)
      values (${projectId}, ${environmentId}, 'pending', ${now})
      on conflict (environment_id) where state in ('pending', 'running') do nothing
      returning ${syncColumns(sql)}`;
    if (made) return made;
    const [open] = await sql<SyncJob[]>`
      select ${syncColumns(sql)} from environment_syncs where environment_id = ${environmentId} and state in ('pending', 'running')`;
    // The open job may have ended between the two statements: then make another.
    if (open) return open;
  }
}

export async function getSync(sql: Tx, id: number): Promise<SyncJob | null> {
  const [row] = await sql<SyncJob[]>`select ${syncColumns(sql)} from environment_syncs where id = ${id}`;
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
