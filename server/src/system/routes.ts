import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';

const HEALTH_TIMEOUT_MS = 2000;

async function databaseAnswers(deps: AppDeps): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
  });
  const probe = deps.sql`select 1`.then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function systemRoutes(ctx: RouteContext, deps: AppDeps, document: () => unknown): void {
  addRoute(ctx, {
    method: 'get',
    path: '/healthz',
    tag: 'System',
    summary: 'Health: 200 when the database answers, 503 when not',
    public: true,
    response: z.object({ status: z.enum(['ok', 'unavailable']) }),
    handler: async ({ res }) => {
      const ok = await databaseAnswers(deps);
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
