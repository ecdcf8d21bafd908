import type { Tx } from '../db.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { type EnvironmentRow, getEnvironmentBySlug } from './store.ts';

/**
 * The environment a run is made in, named by its slug in `body.environment`: it exists in the
 * project and is not disabled. Every way a run is made (a trigger, a reporter, agents) asks this.
 */
export async function environmentForRun(sql: Tx, projectId: number, slug: string, field = 'body.environment'): Promise<EnvironmentRow> {
  const environment = await getEnvironmentBySlug(sql, projectId, slug);
  if (!environment) throw new NotFoundError(`${field}: no environment with slug "${slug}" in this project`);
  if (environment.is_disabled) throw new ConflictError(`environment "${slug}" is disabled`);
  return environment;
}
