import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express, { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorMiddleware } from '../../server/src/http/errors.ts';
import { requestLogging } from '../../server/src/http/logging.ts';
import { createRegistry } from '../../server/src/http/openapi.ts';
import { addRoute, type RouteContext } from '../../server/src/http/route.ts';
import { createLogger } from '../../server/src/logger.ts';

const answer = z.object({ data: z.object({ id: z.number(), name: z.string(), seen_at: z.string().nullable() }) });

/** Public routes that answer their documented shape, or one that drifts from it in one way each. */
function routes(ctx: RouteContext): void {
  const route = (path: string, handler: () => Promise<unknown>, more: { alsoAnswers?: Record<number, string> } = {}) =>
    addRoute(ctx, { method: 'get', path, tag: 'test', summary: path, public: true, response: answer, handler, ...more });
  route('/right', async () => ({ data: { id: 1, name: 'one', seen_at: new Date(0) } }));
  route('/missing', async () => ({ data: { id: 1, seen_at: null } }));
  route('/mistyped', async () => ({ data: { id: '1', name: 'one', seen_at: null } }));
  route('/undocumented', async () => ({ data: { id: 1, name: 'one', seen_at: null, accepts_final_fields: [] } }));
  addRoute(ctx, {
    method: 'get',
    path: '/status/:status',
    tag: 'test',
    summary: 'a status the handler sets itself',
    public: true,
    params: z.object({ status: z.coerce.number() }),
    response: answer,
    alsoAnswers: { 202: 'accepted' },
    handler: async ({ params, res }) => {
      res.status(params.status).json({ data: { id: 1, name: 'one', seen_at: null } });
    },
  });
}

function serve(checkResponses: boolean, logs: string[]): Promise<Server> {
  const open = Router();
  routes({ api: Router(), open, registry: createRegistry(), checkResponses });
  const app = express();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  app.use(requestLogging(createLogger('info', sink)));
  app.use(open);
  app.use(errorMiddleware);
  const server = createServer(app);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

describe('response check', () => {
  const logs: string[] = [];
  let checked: Server;
  let unchecked: Server;
  beforeAll(async () => {
    checked = await serve(true, logs);
    unchecked = await serve(false, []);
  });
  afterAll(async () => {
    await new Promise((resolve) => checked.close(resolve));
    await new Promise((resolve) => unchecked.close(resolve));
  });

  it('when an answer is what its schema says (a Date read as the string sent), then it is sent as it is', async () => {
    const response = await fetch(`${urlOf(checked)}/right`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { id: 1, name: 'one', seen_at: '1970-01-01T00:00:00.000Z' } });
  });

  it.each([
    ['/missing', 'response.data.name'],
    ['/mistyped', 'response.data.id'],
    ['/undocumented', 'response.data.accepts_final_fields: not in the documented schema'],
    ['/status/201', 'status 201 is not documented'],
  ])(
    'when the check is on and %s answers what its schema does not say, then the request fails with a 500 whose log names the route and the field',
    async (path, field) => {
      const response = await fetch(`${urlOf(checked)}${path}`);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ data: null, error: { message: 'internal server error' } });
      const logged = logs.find((line) => line.includes('request failed') && line.includes(`GET ${path.replace(/\d+$/, '{status}')}`));
      expect(logged).toContain('response check');
      expect(logged).toContain(field);
    },
  );

  it('when a handler answers a documented other status itself, then its body is checked and sent', async () => {
    const response = await fetch(`${urlOf(checked)}/status/202`);
    expect(response.status).toBe(202);
  });

  it('when the check is off (as in production), then a drifting answer is sent as the handler gave it', async () => {
    const response = await fetch(`${urlOf(unchecked)}/undocumented`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: Record<string, unknown> }).data.accepts_final_fields).toEqual([]);
  });
});
