import { type Actor, recordChange } from '../audit/index.ts';
import type { Sql, Tx } from '../db.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { getProject } from '../projects/index.ts';
import { environmentSlug } from './schema.ts';
import { createEnvironmentOfSlug, type EnvironmentRow, getEnvironmentBySlug } from './store.ts';

/**
 * The environment a run is made in, named by its slug in `body.environment`: it exists in the
 * project and is not disabled. A trigger asks this: it runs the environment's configuration.
 */
export async function environmentForRun(sql: Tx, projectId: number, slug: string, field = 'body.environment'): Promise<EnvironmentRow> {
  const environment = await getEnvironmentBySlug(sql, projectId, slug);
  if (!environment) throw new NotFoundError(`${field}: no environment with slug "${slug}" in this project`);
  return usable(environment);
}

function usable(environment: EnvironmentRow): EnvironmentRow {
  if (environment.is_disabled) throw new ConflictError(`environment "${environment.slug}" is disabled`);
  return environment;
}

/** Who reports, for the audit trail of an environment a report makes, and when. */
export interface FirstUse {
  actor: Actor;
  now: Date;
}

/**
 * The environment a report, a JUnit upload or an agent names: made on first use (its slug as its
 * name, every other field its default, the making audited with the key that reported) unless the
 * project turned that off, where an unknown slug is refused as before, in one line that says how
 * to make it. `sql` may be a transaction of the caller's (the upload's): the environment then
 * stands or falls with it; otherwise the making and its audit entry take one of their own.
 */
export async function environmentForReport(sql: Tx, projectId: number, slug: string, field: string, firstUse: FirstUse): Promise<EnvironmentRow> {
  const found = await getEnvironmentBySlug(sql, projectId, slug);
  if (found) return usable(found);
  const project = await getProject(sql, projectId);
  if (!project?.create_environments_on_first_use)
    throw new NotFoundError(
      `${field}: no environment with slug "${slug}" in this project, and the project makes none on first use: an admin makes it (the Environments page, or POST /api/environments)`,
    );
  const checked = environmentSlug.safeParse(slug);
  if (!checked.success) throw new InvalidInputError(`${field}: ${checked.error.issues[0]?.message ?? 'is not a valid environment slug'}`);
  const make = async (tx: Tx): Promise<EnvironmentRow> => {
    const made = await createEnvironmentOfSlug(tx, projectId, slug);
    if (!made) {
      // Another shard of the same build made it a moment ago.
      const other = await getEnvironmentBySlug(tx, projectId, slug);
      if (!other) throw new Error(`environment "${slug}" was neither made nor found`);
      return usable(other);
    }
    await recordChange(
      tx,
      { projectId, actor: firstUse.actor, action: 'environment.created', target: `environment:${made.id}`, after: { ...made, made_on_first_use: true } },
      firstUse.now,
    );
    return made;
  };
  // A transaction's handle has savepoints; the pool begins a transaction of its own.
  return 'savepoint' in sql ? make(sql) : (sql as Sql).begin(make);
}
