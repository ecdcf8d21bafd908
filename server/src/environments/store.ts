import type { Tx } from '../db.ts';
import { ConflictError } from '../errors.ts';
import type { CreateEnvironment, UpdateEnvironment } from './schema.ts';

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
  created_at: Date;
  updated_at: Date;
}

const columns = (sql: Tx) =>
  sql`id, project_id, slug, name, runner_projects_match, runner_projects_ignore, is_disabled, env_files, runner_projects,
      scheduled_trigger, burn_in_repeats, playwright_args, max_failures, created_at, updated_at`;

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
                                max_failures)
      values (${projectId}, ${input.slug}, ${input.name}, ${input.runner_projects_match}, ${input.runner_projects_ignore},
              ${input.scheduled_trigger}, ${input.burn_in_repeats}, ${input.playwright_args}, ${input.max_failures})
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
