import { z } from 'zod';
import path from 'node:path';
import type { AppDeps } from '../context.ts';
import { ListingError } from '../executor/playwright.ts';
import { RepositoryError } from '../executor/repository.ts';
import { SandboxError } from '../executor/sandbox.ts';
import { syncEnvironmentShared } from '../executor/sync.ts';
import { getProject } from '../projects/store.ts';
import { HttpError, notFound } from '../http/errors.ts';
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

const TAG = 'Environments';
const single = z.object({ data: z.object({ environment: environmentSchema }) });

async function slugConflictsAs409<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof store.SlugTakenError) {
      throw new HttpError(409, `slug: an environment with slug "${error.message}" already exists in this project`);
    }
    throw error;
  }
}

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
      const environment = await slugConflictsAs409(() => store.createEnvironment(sql, scope.projectId, body));
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
      const environment = await slugConflictsAs409(() => store.updateEnvironment(sql, scope.projectId, params.id, body));
      if (!environment) throw notFound('environment');
      return { data: { environment } };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'post',
    path: '/api/environments/:id/sync',
    summary: "Refresh the environment's runner projects, env files and the project's test cases from the test repository; answers when done",
    params: environmentParams,
    response: z.object({ data: z.object({ success: z.boolean() }) }),
    handler: async ({ params, scope }) => {
      const environment = await store.getEnvironment(sql, scope.projectId, params.id);
      if (!environment) throw notFound('environment');
      const project = await getProject(sql, scope.projectId);
      if (!project) throw notFound('project');
      try {
        await syncEnvironmentShared(sql, { projectId: project.id, environmentId: environment.id, repoUrl: project.repo_url }, { root: path.join(deps.config.dataDir, 'work'), runnerUser: deps.config.runnerUser }, deps.clock());
      } catch (error) {
        // The repository's failures are the caller's to mend; the database's or ours are not a 409.
        if (error instanceof RepositoryError || error instanceof SandboxError || error instanceof ListingError) {
          throw new HttpError(409, `the test repository could not be read: ${error.message}`);
        }
        throw error;
      }
      return { data: { success: true } };
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
      if (!(await store.deleteEnvironment(sql, scope.projectId, params.id))) throw notFound('environment');
      return { success: true };
    },
  });
}
