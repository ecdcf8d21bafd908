import type { AppDeps } from '../context.ts';
import { getEnvironment } from '../environments/index.ts';
import { notFound } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { affectedBaseParams, affectedBaseQuery, affectedBaseResponse } from './schema.ts';
import { affectedBase } from './service.ts';

export function selectionRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql } = deps;
  addRoute(ctx, {
    method: 'get',
    path: '/api/environments/:id/affected-base',
    tag: 'Environments',
    errorShape: 'flat',
    summary:
      "What an affected run on a branch starts from: the environment's last passing run there and its commit (for Playwright's `--only-changed`), the tests that failed or were flaky since, and whether a full run is due",
    params: affectedBaseParams,
    query: affectedBaseQuery,
    response: affectedBaseResponse,
    handler: async ({ params, query, scope }) => {
      const environment = await getEnvironment(sql, scope.projectId, params.id);
      if (!environment) throw notFound('environment');
      return { data: await affectedBase(sql, environment, query.branch, null) };
    },
  });
}
