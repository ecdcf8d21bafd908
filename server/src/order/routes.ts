import type { AppDeps } from '../context.ts';
import { getEnvironmentBySlug } from '../environments/index.ts';
import { HttpError } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { lastPassingRun } from '../selection/index.ts';
import { testOrderQuery, testOrderResponse } from './schema.ts';
import { testOrder } from './service.ts';

export function orderRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql } = deps;
  addRoute(ctx, {
    method: 'get',
    path: '/api/test-order',
    tag: 'Runs',
    summary:
      "The order an environment's tests are to run in for a build of a branch (its order strategy's, else the one asked): for a CI that runs Playwright itself (`proctor-ci order`)",
    query: testOrderQuery,
    response: testOrderResponse,
    handler: async ({ query, scope }) => {
      const environment = await getEnvironmentBySlug(sql, scope.projectId, query.environment);
      if (!environment) throw new HttpError(404, `query.environment: environment "${query.environment}" not found`);
      const strategy = query.strategy ?? environment.order_strategy;
      const branch = query.branch ?? null;
      const [order, base] = await Promise.all([
        testOrder(sql, scope.projectId, environment.id, branch, strategy),
        branch ? lastPassingRun(sql, environment.id, branch, null) : Promise.resolve(null),
      ]);
      return { data: { environment: environment.slug, branch, strategy, ...order, changed_since: base } };
    },
  });
}
