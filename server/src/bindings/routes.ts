import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Person } from '../http/access.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { getProject } from '../projects/index.ts';
import { isInstanceAdmin } from '../users/index.ts';
import { bindingListResponse, bindingParams, bindingResponse, newBindingSchema, projectBindingParams } from './schema.ts';
import { bindRepository, unbindRepository } from './service.ts';
import { listBindings } from './store.ts';

const TAG = 'Repository bindings';
const BY_PROJECT = '/api/projects/:id/repository-bindings';

/** An instance admin, by a session or a personal key of scope admin; a project admin is not one. */
async function requireInstanceAdmin(sql: AppDeps['sql'], person: Person, operation: string): Promise<void> {
  if (!(await isInstanceAdmin(sql, person.userId))) throw new ForbiddenError(`${operation} needs an instance admin`);
  if (person.keyScope !== null && person.keyScope !== 'admin') throw new ForbiddenError(`${operation} needs a personal key of scope admin`);
}

async function requireProject(sql: AppDeps['sql'], id: number): Promise<void> {
  if (!(await getProject(sql, id))) throw new NotFoundError('project not found');
}

export function bindingRoutes(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock'>): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/repository-bindings',
    tag: TAG,
    summary: "The repositories an instance admin bound to the project: where the server's GitHub App and GitLab token may act for it",
    response: bindingListResponse,
    handler: async ({ scope }) => ({ data: { bindings: await listBindings(sql, scope.projectId) } }),
  });

  addRoute(ctx, {
    method: 'post',
    path: BY_PROJECT,
    tag: TAG,
    summary: "Bind a repository to a project: the server's GitHub App (github) or GitLab token (gitlab) may then act there for its notifications",
    person: 'instance-admin',
    params: projectBindingParams,
    body: newBindingSchema,
    status: 201,
    response: bindingResponse,
    fails: { 409: 'The repository is bound to the project already' },
    handler: async ({ params, body, person }) => {
      const { userId } = person as Person;
      await requireInstanceAdmin(sql, person as Person, 'POST /api/projects/{id}/repository-bindings');
      await requireProject(sql, params.id);
      return { data: { binding: await bindRepository(sql, params.id, { kind: 'user', id: userId }, body, clock()) } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: `${BY_PROJECT}/:binding_id`,
    tag: TAG,
    summary: "Unbind a repository from a project: the server's credentials stop acting there, from the next delivery on",
    person: 'instance-admin',
    params: bindingParams,
    response: z.object({ success: z.boolean() }),
    handler: async ({ params, person }) => {
      const { userId } = person as Person;
      await requireInstanceAdmin(sql, person as Person, 'DELETE /api/projects/{id}/repository-bindings/{binding_id}');
      await requireProject(sql, params.id);
      await unbindRepository(sql, params.id, { kind: 'user', id: userId }, params.binding_id, clock());
      return { success: true };
    },
  });
}
