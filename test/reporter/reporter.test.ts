import { attempt } from '../helpers/attempts.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { listIsComplete } from '../../reporter/src/reporter/collect.ts';
import type { Attempt } from '../../reporter/src/reporter/collect.ts';
import { ciRunKey } from '../../reporter/src/runs/ci.ts';
import { resolveSettings } from '../../reporter/src/reporter/settings.ts';
import { ConnectBudget, ApiError, postJson } from '../../reporter/src/api/transport.ts';
import { Uploader } from '../../reporter/src/reporter/uploader.ts';
import { plainText, stripAnsi } from '../../reporter/src/text/ansi.ts';
import { judge, worthSaying } from '../../reporter/src/reporter/forgiveness.ts';

/**
 * A local stand-in for Proctor. It records each request in order (its path, gunzipped body and
 * headers), answers with the status `statusFor` gives for the path and the request's index, after
 * `delayMs`, and counts the most attaches (`/members`) it held open at once.
 */
async function standIn(statusFor: (path: string, index: number) => number = () => 200, delayMs = 0, beginData: object = { ok: true }) {
  const received: { path: string; body: unknown; headers: http.IncomingHttpHeaders }[] = [];
  const load = { open: 0, mostOpen: 0 };
  const server = http.createServer((req, res) => {
    const path = req.url ?? '';
    const isAttach = path.endsWith('/members');
    if (isAttach) load.mostOpen = Math.max(load.mostOpen, ++load.open);
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const index = received.push({ path, body: JSON.parse(gunzipSync(Buffer.concat(chunks)).toString()), headers: req.headers }) - 1;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (isAttach) load.open--;
      const status = statusFor(path, index);
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      const data = path.endsWith('/end')
        ? { success: true, state: 'failed', summary_url: 'http://proctor.test/runs/5' }
        : path.endsWith('/begin')
          ? beginData
          : { ok: true };
      res.end(JSON.stringify(status < 300 ? { data } : { data: null, error: { message: `status ${status}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    get paths() {
      return received.map((request) => request.path);
    },
    load,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A stand-in that answers with the given statuses in turn, the last one from then on. */
function scriptedServer(statuses: number[]) {
  return standIn((_path, index) => statuses[Math.min(index, statuses.length - 1)] as number);
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
  it.each([429, 500, 502, 503, 504])('when the server answers %i and then 200, then the request is retried and succeeds', async (status) => {
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

  it.each([400, 401, 404, 409])('when the server answers %i, then it is not retried', async (status) => {
    const server = await scriptedServer([status, 200]);
    try {
      await expect(postJson(transport(server.url), '/x', {})).rejects.toThrow(ApiError);
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

  it('when the server answers 503 while the tests run, then those attempts are not counted, and after the tests end they are again', async () => {
    const recovering = await scriptedServer([503, 503, 503, 503, 503, 503, 503, 503, 500, 200]);
    const down = await scriptedServer([503]);
    try {
      const budget = new ConnectBudget(1000);
      // Eight 503s and a 500 on three attempts: only the 500 counted.
      await expect(postJson({ ...transport(recovering.url, 3), budget }, '/x', {})).resolves.toEqual({ data: { ok: true } });
      expect(recovering.received).toHaveLength(10);
      budget.testsEnded();
      await expect(postJson({ ...transport(down.url, 3), budget }, '/x', {})).rejects.toThrow(/HTTP 503/);
      expect(down.received).toHaveLength(3);
    } finally {
      await recovering.close();
      await down.close();
    }
  });

  it('when nothing listens after the tests ended, then retries stop once the connect budget is spent, and every later request fails at once', async () => {
    const server = await scriptedServer([200]);
    await server.close();
    const budget = new ConnectBudget(1000);
    budget.testsEnded();
    const options = { url: server.url, apiKey: 'k', projectId: null, maxAttempts: 50, maxBackoffMs: 300, budget };
    const started = Date.now();
    const refused = await postJson(options, '/first', {}).catch((error: unknown) => error);
    const spent = Date.now() - started;
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      unreachable: true,
      message: 'the server could not be reached (ECONNREFUSED on /first), so nothing more is sent (PROCTOR_CONNECT_BUDGET_S=1)',
    });
    expect(spent).toBeGreaterThanOrEqual(900);
    const next = Date.now();
    await expect(postJson(options, '/second', {})).rejects.toBe(refused);
    expect(Date.now() - next).toBeLessThan(100);
  });

  it('when the server is down while the tests run, then waiting costs nothing, and the budget counts from their end', async () => {
    const budget = new ConnectBudget(1000);
    expect(budget.failed('/x', 'ECONNREFUSED', Date.now() - 60_000)).toBeNull();
    expect(budget.remainingMs()).toBe(1000);
    // A long wait between attempts is cut short when the tests end.
    const waited = Date.now();
    const waiting = budget.wait(60_000, (ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    budget.testsEnded();
    await waiting;
    expect(Date.now() - waited).toBeLessThan(100);
    expect(budget.failed('/x', 'ECONNREFUSED', Date.now())).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1050));
    expect(budget.failed('/x', 'ECONNREFUSED', Date.now())).toMatchObject({ unreachable: true });
  });

  it('when the server answers between connection failures, then the budget starts again', async () => {
    const budget = new ConnectBudget(1000);
    budget.testsEnded();
    expect(budget.failed('/x', 'ECONNREFUSED', Date.now())).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 600));
    budget.answered();
    expect(budget.remainingMs()).toBe(1000);
    expect(budget.failed('/x', 'ECONNREFUSED', Date.now())).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(budget.failed('/x', 'ECONNREFUSED', Date.now())).toBeNull();
  });

  it('when nothing listens, then network errors are retried and reported as such', async () => {
    const server = await scriptedServer([200]);
    await server.close();
    await expect(postJson(transport(server.url, 3), '/x', {})).rejects.toThrow(/network error/);
    expect(sleeps).toHaveLength(2);
  });
});

type StandIn = Awaited<ReturnType<typeof standIn>>;

/** Runs `body` against a recording stand-in, closed afterwards whatever happens. */
async function withProctor(options: { statusFor?: (path: string) => number; delayMs?: number; beginData?: object }, body: (proctor: StandIn) => Promise<void>) {
  const proctor = await standIn(options.statusFor, options.delayMs, options.beginData);
  try {
    await body(proctor);
  } finally {
    await proctor.close();
  }
}

function uploaderFor(url: string): Uploader {
  const resolved = resolveSettings(
    { url, apiKey: 'k', flushIntervalMs: 5, maxAttempts: 1 },
    { PROCTOR_RUN_ID: '5', PROCTOR_COMMIT: 'abc', PROCTOR_BRANCH: 'main' },
  );
  if (!resolved.ok) throw new Error(resolved.reason);
  const uploader = new Uploader(resolved.settings);
  uploader.start({ projectDir: '.', tests: [], complete: true, shard: 1, totalShards: 1, startedAt: new Date() });
  return uploader;
}

function finalAttempt(testId: string, failureGroupId: string | null): Attempt {
  return failureGroupId ? attempt(testId, { final: 'unexpected', error_message: 'Error: expected 2', finalError: null, failureGroupId }) : attempt(testId);
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 5000) throw new Error('condition not met in 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('uploader', () => {
  it.each([
    ['lists them', { success: true, accepts_final_fields: ['skip_reason', 'failed_steps', 'stack_frames'] }, true, true],
    ['lists skip reasons only', { success: true, accepts_final_fields: ['skip_reason'] }, true, false],
    ['says nothing of them (a server before 0.2.0)', { success: true }, false, false],
  ])("when the server's begin %s, then a skipped test's reason and a failure's steps are sent or left out", async (_says, beginData, reason, steps) => {
    await withProctor({ beginData }, async (proctor) => {
      const uploader = uploaderFor(proctor.url);
      const skipped = attempt('c'.repeat(41), { final: 'skipped', status: 'skipped' });
      (skipped.final as { skip_reason?: string }).skip_reason = 'Saved cards are not built yet';
      const failed = attempt('d'.repeat(41), { final: 'unexpected', status: 'failed' });
      (failed.final as { failed_steps?: object[] }).failed_steps = [{ category: 'hook', title: 'beforeAll hook' }];
      (failed.final as { stack_frames?: string[] }).stack_frames = ['tests/cart.spec.ts:12:5'];
      uploader.add(skipped);
      uploader.add(failed);
      await uploader.finish('passed', []);
      const results = proctor.received.find((request) => request.path.endsWith('/results'))?.body as { results: Attempt[] };
      expect(results.results[0]?.final?.skip_reason).toBe(reason ? 'Saved cards are not built yet' : undefined);
      expect(results.results[0]?.final?.outcome).toBe('skipped');
      expect(results.results[1]?.final?.failed_steps).toEqual(steps ? [{ category: 'hook', title: 'beforeAll hook' }] : undefined);
      expect(results.results[1]?.final?.stack_frames).toEqual(steps ? ['tests/cart.spec.ts:12:5'] : undefined);
      expect(results.results[1]?.final?.outcome).toBe('unexpected');
    });
  });

  it.each([
    ['lists it', { success: true, accepts_final_fields: [], accepts_attempt_fields: ['parallel_index'] }, 3],
    ['says nothing of it (a server before the timeline)', { success: true, accepts_final_fields: ['skip_reason'] }, undefined],
  ])("when the server's begin %s, then an attempt's worker slot is sent or left out", async (_says, beginData, sent) => {
    await withProctor({ beginData }, async (proctor) => {
      const uploader = uploaderFor(proctor.url);
      uploader.add(attempt('e'.repeat(41), { parallel_index: 3 }));
      await uploader.finish('passed', []);
      const results = proctor.received.find((request) => request.path.endsWith('/results'))?.body as { results: Attempt[] };
      expect(results.results[0]?.parallel_index).toBe(sent);
      expect(results.results[0] && 'parallel_index' in results.results[0]).toBe(sent !== undefined);
    });
  });

  it("when a final failure's batch is delivered, then it is attached to its group during the run, not at the end", async () => {
    await withProctor({}, async (proctor) => {
      const uploader = uploaderFor(proctor.url);
      uploader.add(finalAttempt('a'.repeat(41), 'fg_0123456789abcdef0123'));
      await until(() => proctor.paths.some((path) => path.endsWith('/members')));
      expect(proctor.paths).toEqual(['/api/test-runs/5/shards/1/begin', '/api/test-runs/5/results', '/api/failure-groups/fg_0123456789abcdef0123/members']);
      uploader.add(finalAttempt('b'.repeat(41), null));
      const report = await uploader.finish('failed', []);
      expect(proctor.paths.slice(3)).toEqual(['/api/test-runs/5/results', '/api/test-runs/5/shards/1/end']);
      expect(report).toMatchObject({ runId: 5, delivered: 2, total: 2, attached: 1, failures: [], state: 'failed' });
    });
  });

  it('when an attach is refused, then later results are still delivered and the refusal is reported', async () => {
    await withProctor({ statusFor: (path) => (path.endsWith('/members') ? 404 : 200) }, async (proctor) => {
      const uploader = uploaderFor(proctor.url);
      uploader.add(finalAttempt('a'.repeat(41), 'fg_0123456789abcdef0123'));
      await until(() => proctor.paths.some((path) => path.endsWith('/members')));
      uploader.add(finalAttempt('b'.repeat(41), null));
      const report = await uploader.finish('failed', []);
      expect(proctor.paths.filter((path) => path.endsWith('/results'))).toHaveLength(2);
      expect(report).toMatchObject({ delivered: 2, attached: 0, state: 'failed' });
      expect(report.failures).toEqual([expect.stringMatching(/^could not attach a{41} to failure group fg_0123456789abcdef0123: HTTP 404/)]);
    });
  });

  it('when a batch holds many final failures, then at most 2 attaches are under way at once and every one is made', async () => {
    await withProctor({ delayMs: 50 }, async (proctor) => {
      const uploader = uploaderFor(proctor.url);
      for (let i = 0; i < 12; i++) uploader.add(finalAttempt(i.toString(16).padStart(41, '0'), `fg_${String(i).padStart(20, '0')}`));
      const report = await uploader.finish('failed', []);
      expect(proctor.paths.filter((path) => path.endsWith('/members'))).toHaveLength(12);
      expect(proctor.load.mostOpen).toBe(2);
      expect(report).toMatchObject({ delivered: 12, attached: 12, failures: [] });
    });
  });

  it('when a batch is not delivered, then its failures are not attached and the end still goes', async () => {
    await withProctor({ statusFor: (path) => (path.endsWith('/results') ? 400 : 200) }, async (proctor) => {
      const uploader = uploaderFor(proctor.url);
      uploader.add(finalAttempt('a'.repeat(41), 'fg_0123456789abcdef0123'));
      const report = await uploader.finish('failed', []);
      expect(proctor.paths).toEqual(['/api/test-runs/5/shards/1/begin', '/api/test-runs/5/results', '/api/test-runs/5/shards/1/end']);
      expect(report).toMatchObject({ delivered: 0, total: 1, attached: 0 });
      expect(report.failures).toEqual([expect.stringMatching(/^could not send 1 result\(s\): HTTP 400/)]);
    });
  });
});

describe('settings', () => {
  it('when options and variables are both given, then options win and the run key comes from the CI', () => {
    const result = resolveSettings(
      { url: 'http://a/', environment: 'staging' },
      { PROCTOR_URL: 'http://b', PROCTOR_API_KEY: 'k', GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '2', GITHUB_SHA: 'abc' },
    );
    expect(result.ok && result.settings).toMatchObject({ url: 'http://a', apiKey: 'k', environment: 'staging', runKey: 'staging:github-42-2', commit: 'abc' });
  });

  it('when no URL, key or environment is known, then the reporter is disabled with the reason', () => {
    expect(resolveSettings({}, {})).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_URL') });
    expect(resolveSettings({ url: 'http://a' }, {})).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_API_KEY') });
    expect(resolveSettings({ url: 'http://a', apiKey: 'k' }, {})).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_ENVIRONMENT') });
    expect(resolveSettings({ url: 'http://a', apiKey: 'k' }, { PROCTOR_RUN_ID: '5' }).ok).toBe(true);
  });

  it('when the URL is malformed, then the reporter is disabled at once, saying so', () => {
    for (const url of ['htp://proctor.example.com', 'proctor.example.com', 'http://']) {
      expect(resolveSettings({ url, apiKey: 'k', environment: 'staging' }, {}), url).toEqual({
        ok: false,
        reason: expect.stringContaining('is not an http:// or https:// URL'),
      });
    }
    expect(resolveSettings({ url: 'https://proctor.example.com', apiKey: 'k', environment: 'staging' }, { PROCTOR_CONNECT_BUDGET_S: '0' })).toEqual({
      ok: false,
      reason: expect.stringContaining('PROCTOR_CONNECT_BUDGET_S'),
    });
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

  it('when the package is imported by name, then @proctor/reporter resolves to the built reporter', async () => {
    const module = await import('@proctor/reporter');
    expect(typeof module.default).toBe('function');
    expect(typeof new module.default({}).onBegin).toBe('function');
  });
});

describe('forgiving snoozed failures', () => {
  const now = new Date('2026-11-24T12:00:00Z');
  const failed = [
    { id: 'a', title: 'a.spec.ts › fails' },
    { id: 'b', title: 'b.spec.ts › fails too' },
  ];
  const snooze = (testIds: string[], until = '2026-12-01T00:00:00Z') => ({
    id: 1,
    test_ids: testIds,
    snooze_until: until,
    description: null,
    source: 'user' as const,
  });

  it('when every failed test is covered by an active snooze, then the invocation is forgiven', () => {
    const verdict = judge('failed', failed, 0, { ok: true, snoozes: [snooze(['a']), snooze(['b', 'c'])] }, now);
    expect(verdict).toMatchObject({ kind: 'forgiven' });
  });

  it('when one failed test is not covered, or its snooze has run out, then nothing is forgiven and the line says how many were', () => {
    const partly = judge('failed', failed, 0, { ok: true, snoozes: [snooze(['a'])] }, now);
    expect(partly).toMatchObject({ kind: 'not-forgiven', cause: 'not-snoozed', covered: 1, uncovered: [failed[1]] });
    expect(worthSaying(partly as NonNullable<typeof partly>)).toBe(true);
    const expired = judge('failed', failed, 0, { ok: true, snoozes: [snooze(['a', 'b'], '2026-11-24T11:59:59Z')] }, now);
    expect(expired).toMatchObject({ kind: 'not-forgiven', covered: 0 });
    expect(worthSaying(expired as NonNullable<typeof expired>)).toBe(false);
  });

  it('when something failed outside the tests, or the run timed out or was interrupted, then nothing is forgiven', () => {
    const all = { ok: true as const, snoozes: [snooze(['a', 'b'])] };
    expect(judge('failed', failed, 1, all, now)).toMatchObject({ kind: 'not-forgiven', cause: 'other-errors' });
    expect(judge('timedout', failed, 0, all, now)).toBeNull();
    expect(judge('interrupted', failed, 0, all, now)).toBeNull();
    expect(judge('passed', [], 0, all, now)).toBeNull();
  });

  it('when the snoozes could not be read at start, then nothing is forgiven (fail closed)', () => {
    expect(judge('failed', failed, 0, { ok: false, reason: 'network error' }, now)).toMatchObject({ kind: 'not-forgiven', cause: 'unread' });
  });

  it('when PROCTOR_FORGIVE_SNOOZED is false, then the settings say so; by default they forgive', () => {
    const base = { PROCTOR_URL: 'http://x', PROCTOR_API_KEY: 'k', PROCTOR_ENVIRONMENT: 'e' };
    const off = resolveSettings({}, { ...base, PROCTOR_FORGIVE_SNOOZED: 'false' });
    const on = resolveSettings({}, base);
    expect(off.ok && off.settings.forgiveSnoozed).toBe(false);
    expect(on.ok && on.settings.forgiveSnoozed).toBe(true);
    const option = resolveSettings({ forgiveSnoozed: false }, base);
    expect(option.ok && option.settings.forgiveSnoozed).toBe(false);
  });

  it('when PROCTOR_MAX_FAILURES or the maxFailures option is set, then the run is asked to stop after that many; a value not a whole number is refused', () => {
    const base = { PROCTOR_URL: 'http://x', PROCTOR_API_KEY: 'k', PROCTOR_ENVIRONMENT: 'e' };
    const none = resolveSettings({}, base);
    expect(none.ok && none.settings.maxFailures).toBeNull();
    const fromEnv = resolveSettings({}, { ...base, PROCTOR_MAX_FAILURES: '3' });
    expect(fromEnv.ok && fromEnv.settings.maxFailures).toBe(3);
    const fromOption = resolveSettings({ maxFailures: 5 }, { ...base, PROCTOR_MAX_FAILURES: '3' });
    expect(fromOption.ok && fromOption.settings.maxFailures).toBe(5);
    for (const wrong of ['0', '2.5', 'ten']) {
      const refused = resolveSettings({}, { ...base, PROCTOR_MAX_FAILURES: wrong });
      expect(refused).toEqual({ ok: false, reason: expect.stringContaining('PROCTOR_MAX_FAILURES') });
    }
    expect(resolveSettings({ maxFailures: 0 }, base).ok).toBe(false);
  });
});
