import type { Sql } from '../db.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { auditListResponse, auditQuerySchema } from './schema.ts';
import { listChanges } from './store.ts';

export function auditRoutes(ctx: RouteContext, sql: Sql): void {
  addRoute(ctx, {
    method: 'get',
    path: '/api/audit-events',
    needs: 'admin',
    tag: 'Audit',
    summary: "The project's changes of access and configuration, newest first: who did what to what, with before and after",
    query: auditQuerySchema,
    response: auditListResponse,
    handler: async ({ query, scope }) => {
      const { events, total } = await listChanges(sql, scope.projectId, query, query.per_page, offsetOf(query.page, query.per_page));
      return { data: { events }, pagination: paginate(total, query.page, query.per_page) };
    },
  });
}
