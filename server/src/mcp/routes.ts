import { createRequire } from 'node:module';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { requestScope } from '../http/access.ts';
import { HttpError } from '../http/errors.ts';
import { positiveId } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { readRun } from './reads.ts';
import { runMarkdown } from './summary.ts';

/** The server package's version, from its package.json (two folders up from src/mcp/ and dist/mcp/). */
const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: each POST is answered by a server made for the
 * request's key (its project, its role). A dashboard session is not taken (a page of another site
 * could send its cookie), nor a run's key or an agent's token (they act on their own run alone).
 * The protocol's SDK is loaded on the first request: a server no assistant asks carries none of it.
 */
export function mcpRouter(deps: AppDeps): Router {
  const router = Router();
  let transport: Promise<typeof import('./transport.ts')> | null = null;
  router.post('/', async (req: Request, res: Response) => {
    const scope = requestScope(res);
    const { principal } = scope;
    if (principal.kind === 'user' && principal.keyId === null)
      throw new HttpError(401, 'MCP takes a bearer key (a personal or project key), not a dashboard session');
    if (principal.kind === 'run' || principal.kind === 'agent') throw new HttpError(403, "MCP is not open to a run's key or an agent's token");
    transport ??= import('./transport.ts');
    await (await transport).answerMcp(deps, scope, VERSION, req, res);
  });
  // Stateless: no stream to open and no session to end.
  const notHere = (_req: Request, res: Response) => {
    res
      .status(405)
      .setHeader('allow', 'POST')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'POST JSON-RPC messages to /mcp: this server keeps no sessions' }, id: null });
  };
  router.get('/', notHere);
  router.delete('/', notHere);
  return router;
}

/** A run as Markdown over HTTP too, for pasting anywhere: what the `proctor://runs/{id}` resource answers. */
export function runSummaryRoutes(ctx: RouteContext, deps: AppDeps): void {
  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/summary.md',
    tag: 'Test runs',
    summary: 'A run as Markdown: its counts and its first failures with their errors, where they failed and their failure groups',
    params: z.object({ id: positiveId }).strict(),
    produces: 'text/markdown',
    handler: async ({ params, scope, res }) => {
      const read = await readRun(deps, scope.projectId, { run_id: params.id, page: 1 }, 'path.id');
      res.setHeader('content-type', 'text/markdown; charset=utf-8');
      res.send(runMarkdown(read));
      return undefined;
    },
  });
}
