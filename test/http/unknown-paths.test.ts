import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMiddleware } from '../../server/src/http/errors.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

// A path nothing serves, and any other error: a person's browser gets a page that says so, the
// API's clients the contract's JSON, as they ask.

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('a path nothing serves', () => {
  it("when a browser asks for a page that is not there, then it gets a 404 page saying so, linking back, with the pages' policy", async () => {
    const answer = await fetch(`${server.url}/projects/1/nowhere`, { headers: { accept: BROWSER } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await answer.text();
    expect(html).toContain('<h1>Not found</h1>');
    expect(html).toContain('no route for GET /projects/1/nowhere');
    expect(html).toContain('<a href="/">Back to your projects</a>');
  });

  it('when the path holds markup, then the page shows it as sent, percent-encoded, never as markup', async () => {
    const html = await (await fetch(`${server.url}/%3Cscript%3Ealert(1)%3C%2Fscript%3E`, { headers: { accept: BROWSER } })).text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('no route for GET /%3Cscript%3Ealert(1)%3C%2Fscript%3E');
  });

  it('when a browser asks for a path under /api, then the answer is JSON (without a key, the 401 every API route answers first)', async () => {
    const answer = await fetch(`${server.url}/api/nowhere`, { headers: { accept: BROWSER } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it.each([
    ['a client that takes anything', '/projects/1/nowhere', '*/*'],
    ['a client that asks for JSON', '/nowhere', 'application/json'],
  ])("when %s is asked for, then the answer is the contract's JSON 404", async (_who, path, accept) => {
    const answer = await fetch(`${server.url}${path}`, { headers: { accept } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({ data: null, error: { message: `no route for GET ${path}` } });
  });
});

describe('error pages for people', () => {
  it("when a viewer's browser opens a page for the project's admins, then it gets a 403 page that says why", async () => {
    const { projectId } = await seedProject(server.sql);
    const { userId } = await seedUser(server.sql, [projectId], { role: 'viewer' });
    const signIn = await fetch(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, new Date())}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const answer = await fetch(`${server.url}/projects/${projectId}/keys`, { headers: { accept: BROWSER, cookie } });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await answer.text();
    expect(html).toContain('<h1>Not allowed</h1>');
    expect(html).toContain("Keys are for the project's admins");
  });

  it('when something fails unexpectedly, then a browser gets a 500 page and the API its JSON, neither with the failure inside', async () => {
    const app = express();
    app.get('/projects/1/runs', () => {
      throw new Error('secret detail of the failure');
    });
    app.get('/api/test-runs', () => {
      throw new Error('secret detail of the failure');
    });
    app.use(errorMiddleware);
    const listener = app.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    try {
      const page = await fetch(`${base}/projects/1/runs`, { headers: { accept: BROWSER } });
      expect(page.status).toBe(500);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await page.text();
      expect(html).toContain('<h1>Something went wrong</h1>');
      expect(html).toContain('internal server error: Proctor logged it');
      expect(html).not.toContain('secret detail');
      const api = await fetch(`${base}/api/test-runs`, { headers: { accept: BROWSER } });
      expect(api.status).toBe(500);
      expect(await api.json()).toEqual({ data: null, error: { message: 'internal server error' } });
    } finally {
      listener.close();
    }
  });
});
