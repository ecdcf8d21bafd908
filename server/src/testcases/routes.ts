import type { AppDeps } from '../context.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { replaceTagsSchema, testCaseListQuery, testCaseListResponse, testCaseParams, testCaseResponse } from './schema.ts';
import * as store from './store.ts';

const TAG = 'Test cases';

export function testCaseRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-cases/v2',
    tag: TAG,
    summary: 'List the test cases synced from the repository by runs',
    query: testCaseListQuery,
    response: testCaseListResponse,
    handler: async ({ query, scope }) => {
      if (query.project_id !== scope.projectId) {
        throw new HttpError(403, `query.project_id: ${query.project_id} is not the project of this request (${scope.projectId})`);
      }
      const { rows, total } = await store.listTestCases(sql, scope.projectId, query);
      return { data: { test_cases: rows }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'put',
    path: '/api/test-cases/:id/tags',
    needs: 'member',
    tag: TAG,
    summary: "Replace a test case's tags; runs keep them from then on",
    params: testCaseParams,
    body: replaceTagsSchema,
    response: testCaseResponse,
    handler: async ({ params, body, scope }) => {
      const tags = [...new Set(body.tags.map((tag) => (tag.startsWith('@') ? tag : `@${tag}`)))];
      const row = await store.replaceTags(sql, scope.projectId, params.id, tags, clock());
      if (!row) throw notFound('test case');
      return { data: { test_case: row } };
    },
  });
}
