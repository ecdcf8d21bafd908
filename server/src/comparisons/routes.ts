import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { compareRuns } from './compare.ts';
import { compareParams, compareQuery, comparisonResponse } from './schema.ts';

export function comparisonRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/compare/:otherId',
    tag: 'Test runs',
    summary:
      'What changed from run otherId to run id: new failures, fixed, still failing, added and removed tests, flaky in either, and the largest changes of duration',
    params: compareParams,
    query: compareQuery,
    response: comparisonResponse,
    handler: async ({ params, query, scope }) => ({ data: { comparison: await compareRuns(sql, scope.projectId, params.id, params.otherId, query.limit) } }),
  });
}
