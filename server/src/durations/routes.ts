import type { AppDeps } from '../context.ts';
import { getEnvironment } from '../environments/index.ts';
import { HttpError } from '../http/errors.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { slowerTestsQuery, slowerTestsResponse } from './schema.ts';
import { SHIFT_RULES } from './shift.ts';
import { listSlowerTests } from './store.ts';
import { slowerTestView } from './view.ts';

export function slowerTestRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql } = deps;
  addRoute(ctx, {
    method: 'get',
    path: '/api/slower-tests',
    tag: 'Analytics',
    summary: `Tests whose passed duration rose and stayed up: at least ${SHIFT_RULES.minAfter} runs slower by ${SHIFT_RULES.minRise * 100}% and ${SHIFT_RULES.minRiseMs} ms against the runs before, held by a rank test; the largest rise first`,
    query: slowerTestsQuery,
    response: slowerTestsResponse,
    handler: async ({ query, scope }) => {
      if (query.environment_id !== undefined && !(await getEnvironment(sql, scope.projectId, query.environment_id))) {
        throw new HttpError(404, `query.environment_id: environment ${query.environment_id} not found`);
      }
      const { rows, total } = await listSlowerTests(sql, scope.projectId, {
        environmentId: query.environment_id ?? null,
        testCaseId: query.test_case_id ?? null,
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      return { data: { tests: rows.map(slowerTestView) }, pagination: paginate(total, query.page, query.per_page) };
    },
  });
}
