import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { searchQuery, searchResponse } from './schema.ts';
import { searchProject } from './service.ts';

export function searchRoutes(ctx: RouteContext, deps: AppDeps): void {
  addRoute(ctx, {
    method: 'get',
    path: '/api/search',
    tag: 'Search',
    summary: "The project's tests (title or file), runs (number, commit, branch) and failure groups (title) that a text names",
    query: searchQuery,
    response: searchResponse,
    handler: async ({ query, scope }) => ({ data: { search: await searchProject(deps.sql, scope.projectId, query) } }),
  });
}
