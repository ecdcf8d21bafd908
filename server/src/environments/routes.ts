import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import {
  createEnvironmentSchema,
  environmentListQuery,
  environmentListResponse,
  environmentParams,
  environmentSchema,
  updateEnvironmentSchema,
} from './schema.ts';
import * as store from './store.ts';
import { audited } from '../audit/index.ts';
import { getProject, requireRepository } from '../projects/index.ts';
import { syncAndWait } from './sync-request.ts';

const TAG = 'Environments';
const single = z.object({ data: z.object({ environment: environmentSchema }) });

export function environmentRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql } = deps;
  const common = { tag: TAG, errorShape: 'flat' as const };

  addRoute(ctx, {
    ...common,
    method: 'get',
    path: '/api/environments',
    summary: 'List environments',
    query: environmentListQuery,
    response: environmentListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listEnvironments(sql, scope.projectId, query.per_page, offsetOf(query.page, query.per_page));
      return { data: { environments: rows }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'post',
    path: '/api/environments',
    summary: 'Create an environment',
    body: createEnvironmentSchema,
    response: single,
    status: 201,
    handler: async ({ body, scope }) => {
      const environment = await audited(sql, scope, deps.clock(), async (tx) => {
        const made = await store.createEnvironment(tx, scope.projectId, body);
        return [made, { action: 'environment.created', target: `environment:${made.id}`, after: made }];
      });
      return { data: { environment } };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'get',
    path: '/api/environments/:id',
    summary: 'Read an environment',
    params: environmentParams,
    response: single,
    handler: async ({ params, scope }) => {
      const environment = await store.getEnvironment(sql, scope.projectId, params.id);
      if (!environment) throw notFound('environment');
      return { data: { environment } };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'patch',
    path: '/api/environments/:id',
    summary: 'Update an environment',
    params: environmentParams,
    body: updateEnvironmentSchema,
    response: single,
    handler: async ({ params, body, scope }) => {
      const environment = await audited(sql, scope, deps.clock(), async (tx) => {
        const before = await store.getEnvironment(tx, scope.projectId, params.id);
        const after = before ? await store.updateEnvironment(tx, scope.projectId, params.id, body) : null;
        if (!before || !after) throw notFound('environment');
        return [after, { action: 'environment.updated', target: `environment:${after.id}`, before, after }];
      });
      return { data: { environment } };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'post',
    path: '/api/environments/:id/sync',
    needs: 'member',
    summary: "Refresh the environment's runner projects, env files and the project's test cases from the test repository; answers when done",
    params: environmentParams,
    response: z.object({ data: z.object({ success: z.boolean() }) }),
    alsoAnswers: { 202: 'The sync job goes on past PROCTOR_SYNC_WAIT_S (success false); a later sync waits on the same job' },
    fails: { 409: 'The project has no test repository, or the test repository, the runner or Playwright refused the sync; the message says why' },
    handler: async ({ params, scope, res }) => {
      const environment = await store.getEnvironment(sql, scope.projectId, params.id);
      if (!environment) throw notFound('environment');
      requireRepository((await getProject(sql, scope.projectId))?.repo_url ?? null);
      const outcome = await syncAndWait(
        sql,
        { projectId: scope.projectId, environmentId: environment.id },
        {
          now: deps.clock(),
          waitMs: deps.config.syncWaitMs,
          wake: () => deps.jobs?.syncRequested(),
        },
      );
      if (outcome === 'done') return { data: { success: true } };
      res.status(202).json({ data: { success: false } });
      return undefined;
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'delete',
    path: '/api/environments/:id',
    summary: 'Delete an environment',
    params: environmentParams,
    response: z.object({ success: z.boolean() }),
    handler: async ({ params, scope }) => {
      await audited(sql, scope, deps.clock(), async (tx) => {
        const before = await store.getEnvironment(tx, scope.projectId, params.id);
        if (!before || !(await store.deleteEnvironment(tx, scope.projectId, params.id))) throw notFound('environment');
        return [null, { action: 'environment.deleted', target: `environment:${before.id}`, before }];
      });
      return { success: true };
    },
  });
}
