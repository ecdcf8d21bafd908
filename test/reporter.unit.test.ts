import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { listIsComplete } from '../reporter/src/collect.ts';
import { ciRunKey, resolveSettings } from '../reporter/src/settings.ts';
import { DeliveryError, postJson } from '../reporter/src/transport.ts';
import { plainText, stripAnsi } from '../reporter/src/ansi.ts';

/** A local server that answers with the given statuses in turn and records what it received. */
async function scriptedServer(statuses: number[]) {
  const received: { body: unknown; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: JSON.parse(gunzipSync(Buffer.concat(chunks)).toString()), headers: req.headers });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)] as number;
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(status < 300 ? { data: { ok: true } } : { data: null, error: { message: `status ${status}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const sleeps: number[] = [];
const instantSleep = async (ms: number) => {
  sleeps.push(ms);
};
const transport = (url: string, maxAttempts = 5) => ({ url, apiKey: 'k', projectId: '7', maxAttempts, maxBackoffMs: 4000, sleep: instantSleep });

afterEach(() => {
  sleeps.length = 0;
});

describe('delivery', () => {
  it.each([429, 502, 503, 504])('when the server answers %i and then 200, then the request is retried and succeeds', async (status) => {
    const server = await scriptedServer([status, status, 200]);
    try {
      expect(await postJson(transport(server.url), '/x', { a: 1 })).toEqual({ data: { ok: true } });
      expect(server.received).toHaveLength(3);
      expect(server.received[0]?.body).toEqual({ a: 1 });
      expect(server.received[0]?.headers['content-encoding']).toBe('gzip');
      expect(server.received[0]?.headers['x-project-id']).toBe('7');
      expect(sleeps).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it.each([400, 401, 404, 409, 500])('when the server answers %i, then it is not retried', async (status) => {
    const server = await scriptedServer([status, 200]);
    try {
      await expect(postJson(transport(server.url), '/x', {})).rejects.toThrow(DeliveryError);
      expect(server.received).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('when the server never recovers, then the attempts are bounded and the backoff capped', async () => {
    const server = await scriptedServer([503]);
    try {
      await expect(postJson(transport(server.url, 6), '/x', {})).rejects.toThrow(/HTTP 503/);
      expect(server.received).toHaveLength(6);
      expect(sleeps).toHaveLength(5);
      expect(Math.max(...sleeps)).toBeLessThanOrEqual(4000);
    } finally {
      await server.close();
    }
  });

  it('when nothing listens, then network errors are retried and reported as such', async () => {
    const server = await scriptedServer([200]);
    await server.close();
    await expect(postJson(transport(server.url, 3), '/x', {})).rejects.toThrow(/network error/);
    expect(sleeps).toHaveLength(2);
  });
});

describe('settings', () => {
  it('when options and variables are both given, then options win and the run key comes from the CI', () => {
    const result = resolveSettings({ url: 'http://a/', environment: 'staging' }, { PROCTOR_URL: 'http://b', PROCTOR_API_KEY: 'k', GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '2', GITHUB_SHA: 'abc' });
    expect(result.ok && result.settings).toMatchObject({ url: 'http://a', apiKey: 'k', environment: 'staging', runKey: 'staging:github-42-2', commit: 'abc' });
  });

  it('when no URL, key or environment is known, then the reporter is disabled with the reason', () => {
    expect(resolveSettings({}, {})).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_URL') });
    expect(resolveSettings({ url: 'http://a' }, {})).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_API_KEY') });
    expect(resolveSettings({ url: 'http://a', apiKey: 'k' }, {})).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_ENVIRONMENT') });
    expect(resolveSettings({ url: 'http://a', apiKey: 'k' }, { PROCTOR_RUN_ID: '5' }).ok).toBe(true);
  });

  it('when no CI build id is set, then there is no run key and each invocation is its own run', () => {
    expect(ciRunKey({})).toBeNull();
    expect(ciRunKey({ PROCTOR_RUN_KEY: 'mine', GITHUB_RUN_ID: '1' })).toBe('mine');
    expect(ciRunKey({ CI_PIPELINE_ID: '9' })).toBe('gitlab-9');
  });

  it('when the command line filters tests, then the list is not complete', () => {
    expect(listIsComplete(['node', 'playwright', 'test'])).toBe(true);
    expect(listIsComplete(['node', 'playwright', 'test', '--shard=1/2', '--project', 'mobile', '--reporter', 'list'])).toBe(true);
    expect(listIsComplete(['node', 'playwright', 'test', 'tests/home.spec.ts'])).toBe(false);
    expect(listIsComplete(['node', 'playwright', 'test', '--grep', '@smoke'])).toBe(false);
    expect(listIsComplete(['node', 'playwright', 'test', '-g=x'])).toBe(false);
  });

  it('when a message has colour codes, then they are removed', () => {
    expect(stripAnsi('\u001b[31mExpected\u001b[39m: \u001b[2m"a"\u001b[22m')).toBe('Expected: "a"');
  });

  it('when output holds NUL characters, which PostgreSQL text cannot store, then each becomes U+FFFD', () => {
    expect(plainText('\u001b[31mbin\u0000ary\u0000\u001b[39m')).toBe('bin\uFFFDary\uFFFD');
  });

  it('when the package is imported by name, then proctor/reporter resolves to the built reporter', async () => {
    const module = await import('proctor/reporter');
    expect(typeof module.default).toBe('function');
    expect(typeof new module.default({}).onBegin).toBe('function');
  });
});
