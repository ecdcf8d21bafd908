import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { databaseAnswers } from './store.ts';

export function systemRoutes(ctx: RouteContext, deps: AppDeps, document: () => unknown): void {
  addRoute(ctx, {
    method: 'get',
    path: '/healthz',
    tag: 'System',
    summary: 'Health: 200 when the database answers, 503 when not',
    public: true,
    response: z.object({ status: z.enum(['ok', 'unavailable']) }),
    handler: async ({ res }) => {
      const ok = await databaseAnswers(deps.sql);
      res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable' });
    },
  });
  addRoute(ctx, {
    method: 'get',
    path: '/api/openapi.json',
    tag: 'System',
    summary: 'This OpenAPI 3.1 document',
    public: true,
    response: z.object({ openapi: z.string() }).loose(),
    handler: async () => document(),
  });
}
