import type { AppDeps } from '../context.ts';
import { getEnvironment } from '../environments/index.ts';
import { HttpError } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { digestQuery, digestResponse } from './schema.ts';
import { composeDigest } from './service.ts';

export function digestRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;
  addRoute(ctx, {
    method: 'get',
    path: '/api/digest',
    tag: 'Analytics',
    summary:
      "An environment's digest of the last day or week: runs and pass rate against the period before, the tests that turned flaky or broken, the flakiest, most failing and slowest tests, and the largest rises of duration and flakiness against the look-back before the period",
    query: digestQuery,
    response: digestResponse,
    handler: async ({ query, scope }) => {
      const environment = await getEnvironment(sql, scope.projectId, query.environment_id);
      if (!environment) throw new HttpError(404, `query.environment_id: environment ${query.environment_id} not found`);
      return { data: { digest: await composeDigest(sql, scope.projectId, environment, query.period, clock()) } };
    },
  });
}
