import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertResults } from '../../server/src/runs/results.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// Live runs (issue 55, point 3): a run under way streams its results into its page and into the
// runs list as they are stored (server-sent events), resumes after a disconnect from the last
// event's id, and closes once the run ends; the page never reloads.
let server: TestServer;
let browser: Browser;
let projectId: number;
let projectKey: string;
let otherKey: string;
let userId: string;
let outsiderId: string;
let api: ReturnType<typeof client>;
const clock = new TestClock('live');

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  projectKey = project.key;
  api = client(server.url, project.key);
  await seedEnvironment(server.sql, projectId, 'staging');
  const other = await seedProject(server.sql, 'Elsewhere');
  otherKey = other.key;
  await seedEnvironment(server.sql, other.projectId, 'staging');
  userId = (await seedUser(server.sql, [projectId])).userId;
  outsiderId = (await seedUser(server.sql, [])).userId;
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const OUTCOMES = ['expected', 'unexpected', 'expected', 'flaky', 'unexpected', 'skipped'] as const;

/** A reported run under way whose one shard lists `count` tests, none with a result yet. */
async function runUnderWay(count: number): Promise<{ runId: number; ids: string[] }> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'main' })).body.data.test_run.id as number;
  const ids = Array.from({ length: count }, (_, i) => testId(runId * 100 + i + 1));
  const begun = await api.post(`/api/test-runs/${runId}/shards/1/begin`, {
    tests: ids.map((id, i) => listedTest(id, { title: `live test ${i + 1} <b>not bold</b>` })),
    complete: true,
  });
  expect(begun.status).toBe(200);
  return { runId, ids };
}

async function store(runId: number, id: string, outcome: (typeof OUTCOMES)[number]): Promise<void> {
  const posted = await api.post(`/api/test-runs/${runId}/results`, {
    shard: 1,
    results: attemptsOf(id, outcome, `Error: <img src=x onerror="window.pwned=1"> ${id}`),
  });
  expect(posted.status).toBe(200);
}

async function endRun(runId: number): Promise<void> {
  expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' })).status).toBe(200);
}

async function signedInPage(user = userId): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  const token = await createLoginLink(server.sql, user, clock.now);
  await page.goto(`${server.url}/sign-in/link?token=${token}`);
  return page;
}

interface Event {
  id: string | null;
  event: string;
  data: any;
}

/** A plain HTTP client of an event stream: its events as they come, and whether the server closed it. */
function openStream(path: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const events: Event[] = [];
  let status = 0;
  let ended = false;
  const done = (async () => {
    const response = await fetch(`${server.url}${path}`, { headers, signal: abort.signal });
    status = response.status;
    if (!response.ok || !response.body) {
      ended = true;
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':') || !line.includes(':')) continue;
            const at = line.indexOf(':');
            fields.set(line.slice(0, at), line.slice(at + 1).trimStart());
          }
          if (fields.has('data'))
            events.push({ id: fields.get('id') ?? null, event: fields.get('event') ?? 'message', data: JSON.parse(fields.get('data') as string) });
        }
      }
      ended = true;
    } catch {
      // Aborted by the test.
    }
  })();
  return {
    events,
    status: () => status,
    ended: () => ended,
    results: () => events.flatMap((event) => (event.event === 'progress' ? (event.data.results as { test_case_id: string }[]) : [])),
    close: async () => {
      abort.abort();
      await done.catch(() => undefined);
    },
  };
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a run under way, live on its page', () => {
  it('when results are stored while its page is open, then each shows within 1 s with the counts and progress, the page never reloads, and the stream closes when the run ends', async () => {
    const { runId, ids } = await runUnderWay(OUTCOMES.length);
    const page = await signedInPage();
    expect((await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`))?.status()).toBe(200);
    const progress = page.locator('[data-live-progress]');
    await page.evaluate(() => {
      (window as unknown as { liveMark: string }).liveMark = 'kept';
    });
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations.push(frame.url());
    });
    // The stream is open before the first result.
    await expect.poll(() => progress.textContent(), { timeout: 5000 }).toContain('0 of 6 tests done');

    const failedSoFar = (n: number) => OUTCOMES.slice(0, n).filter((outcome) => outcome === 'unexpected').length;
    for (const [i, outcome] of OUTCOMES.entries()) {
      const id = ids[i] as string;
      await store(runId, id, outcome);
      const stored = Date.now();
      await page.locator(`tr[data-test="${id}"]`).waitFor({ timeout: 1000 });
      expect(Date.now() - stored).toBeLessThan(1000);
      await expect.poll(() => progress.textContent(), { timeout: 1000 }).toContain(`${i + 1} of 6 tests done · ${failedSoFar(i + 1)} failed`);
    }
    // Each in its section, once; text as text (the markup in titles and errors is not markup).
    expect(await page.locator('table.tests[data-section="Failed"] tr[data-test]').count()).toBe(2);
    expect(await page.locator('table.tests[data-section="Flaky"] tr[data-test]').count()).toBe(1);
    expect(await page.locator('table.tests[data-section="Passed and skipped"] tr[data-test]').count()).toBe(3);
    expect(await page.locator('tr[data-test]').count()).toBe(6);
    expect(await page.getByRole('heading', { name: 'Failed (2)' }).count()).toBe(1);
    expect(await page.locator('[data-count="failed"] b').textContent()).toBe('2');
    expect(await page.locator(`tr[data-test="${ids[1]}"] strong`).textContent()).toBe('live test 2 <b>not bold</b>');
    expect(await page.locator(`tr[data-test="${ids[1]}"] pre.error`).textContent()).toContain('<img src=x');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();

    await endRun(runId);
    await expect.poll(() => page.locator('[data-run-report]').getAttribute('data-state'), { timeout: 2000 }).toBe('failed');
    expect(await page.locator('h1 .state').textContent()).toBe('failed');
    // The ended run's report is read again and put in place of the streamed one: its failure groups come with it.
    await expect.poll(() => page.locator('[data-live-run]').count(), { timeout: 5000 }).toBe(0);
    expect(await page.locator('tr[data-test]').count()).toBe(6);
    expect(await page.evaluate(() => (window as unknown as { liveMark?: string }).liveMark)).toBe('kept');
    expect(navigations).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('when a run under way is in the runs list, then its counts and state move in place and the list never reloads', async () => {
    const { runId, ids } = await runUnderWay(3);
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs`);
    await page.evaluate(() => {
      (window as unknown as { liveMark: string }).liveMark = 'kept';
    });
    const row = page.locator(`tr[data-run="${runId}"]`);
    expect(await row.locator('[data-counts]').textContent()).toBe('0 passed · 0 failed · 0 flaky');
    await store(runId, ids[0] as string, 'expected');
    await store(runId, ids[1] as string, 'unexpected');
    await expect.poll(() => row.locator('[data-counts]').textContent(), { timeout: 2500 }).toBe('1 passed · 1 failed · 0 flaky');
    await store(runId, ids[2] as string, 'expected');
    await endRun(runId);
    await expect.poll(() => row.locator('[data-state-cell]').textContent(), { timeout: 2500 }).toBe('failed');
    expect(await row.locator('[data-counts]').textContent()).toBe('2 passed · 1 failed · 0 flaky');
    expect(await page.evaluate(() => (window as unknown as { liveMark?: string }).liveMark)).toBe('kept');
    await page.context().close();
  }, 60_000);

  it('when a run is made while the runs list is open, then it shows at the top without a reload, and its counts move in place', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs`);
    await page.evaluate(() => {
      (window as unknown as { liveMark: string }).liveMark = 'kept';
    });
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations.push(frame.url());
    });
    const { runId, ids } = await runUnderWay(2);
    const made = Date.now();
    const row = page.locator(`tr[data-run="${runId}"]`);
    await row.waitFor({ timeout: 3000 });
    expect(Date.now() - made).toBeLessThan(3000);
    // Newest first, drawn as the server draws a row: its number links to the run.
    expect(await page.locator('tbody tr[data-run]').first().getAttribute('data-run')).toBe(String(runId));
    expect(await row.locator('a').getAttribute('href')).toBe(`/projects/${projectId}/runs/${runId}`);
    expect(await row.locator('td').nth(2).textContent()).toBe('staging');
    expect(await row.locator('td').nth(3).textContent()).toBe('main');
    await store(runId, ids[0] as string, 'unexpected');
    await expect.poll(() => row.locator('[data-counts]').textContent(), { timeout: 2500 }).toBe('0 passed · 1 failed · 0 flaky');
    await store(runId, ids[1] as string, 'expected');
    await endRun(runId);
    await expect.poll(() => row.locator('[data-state-cell]').textContent(), { timeout: 2500 }).toBe('failed');
    // Once: a run the stream sends again is updated in its row, not added twice.
    expect(await page.locator(`tr[data-run="${runId}"]`).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { liveMark?: string }).liveMark)).toBe('kept');
    expect(navigations).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('when a run is made while a filtered runs list is open, then it shows only where the filter shows it', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs?branch=release`);
    const { runId } = await runUnderWay(1);
    const other = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'release' })).body.data.test_run.id as number;
    await page.locator(`tr[data-run="${other}"]`).waitFor({ timeout: 3000 });
    expect(await page.locator(`tr[data-run="${runId}"]`).count()).toBe(0);
    await page.context().close();
  }, 60_000);
});

describe("a run's event stream over plain HTTP", () => {
  it('when a client reconnects with the last event id, then it gets what was stored while it was away, nothing twice, and the stream closes when the run ends', async () => {
    const { runId, ids } = await runUnderWay(5);
    const headers = { authorization: `Bearer ${projectKey}` };
    await store(runId, ids[0] as string, 'expected');
    await store(runId, ids[1] as string, 'unexpected');

    // From the start: what is stored already, then what comes.
    const first = openStream(`/api/test-runs/${runId}/events`, headers);
    await until(() => first.results().length === 2);
    await store(runId, ids[2] as string, 'flaky');
    await until(() => first.results().length === 3);
    // Under way: 3 of 5 done, the time left estimated from their durations.
    expect(first.events.at(-1)?.data.progress).toMatchObject({ state: 'running', done: 3, total: 5, failed: 1, flaky: 1 });
    expect(first.events.at(-1)?.data.progress.time_left_ms).toBeGreaterThanOrEqual(0);
    const lastId = first.events.at(-1)?.id as string;
    expect(lastId).toMatch(/^\d+(\.\d+)*$/);
    await first.close();

    // Away: two more stored; back with Last-Event-ID.
    await store(runId, ids[3] as string, 'expected');
    await store(runId, ids[4] as string, 'skipped');
    const second = openStream(`/api/test-runs/${runId}/events`, { ...headers, 'last-event-id': lastId });
    await until(() => second.results().length === 2);
    await endRun(runId);
    await until(() => second.ended(), 5000);
    expect(second.results().map((result) => result.test_case_id)).toEqual([ids[3], ids[4]]);
    expect(second.events.at(-1)).toMatchObject({ event: 'end', data: { state: 'failed' } });
    const lastProgress = second.events.filter((event) => event.event === 'progress').at(-1)?.data.progress;
    expect(lastProgress).toMatchObject({ state: 'failed', done: 5, total: 5, failed: 1, flaky: 1, time_left_ms: 0 });
    expect(first.results().map((result) => result.test_case_id)).toEqual([ids[0], ids[1], ids[2]]);

    // A run that ended: its results, the end, and the stream closes.
    const after = openStream(`/api/test-runs/${runId}/events`, headers);
    await until(() => after.ended(), 5000);
    expect(after.results()).toHaveLength(5);
    expect(after.events.at(-1)?.event).toBe('end');
  }, 60_000);

  it("when another project's key, a non-member or a signed-out visitor asks for the stream, then the run does not exist for them", async () => {
    const { runId } = await runUnderWay(1);
    const other = openStream(`/api/test-runs/${runId}/events`, { authorization: `Bearer ${otherKey}` });
    await until(() => other.ended());
    expect(other.status()).toBe(404);
    const none = openStream(`/api/test-runs/${runId}/events`, {});
    await until(() => none.ended());
    expect(none.status()).toBe(401);

    const outsider = await signedInPage(outsiderId);
    const answer = await outsider.request.get(`${server.url}/projects/${projectId}/runs/${runId}/events`);
    expect(answer.status()).toBe(404);
    await outsider.context().close();
    const bad = openStream(`/api/test-runs/${runId}/events`, { authorization: `Bearer ${projectKey}`, 'last-event-id': 'abc' });
    await until(() => bad.ended());
    expect(bad.status()).toBe(400);
  }, 30_000);

  it("when runs are made after a list's newest, then the project's list stream sends each as it is made, and no other project's", async () => {
    const [newest] = await server.sql<{ id: number }[]>`select coalesce(max(id), 0)::int as id from test_runs`;
    const headers = { authorization: `Bearer ${projectKey}` };
    const stream = openStream(`/api/test-runs/events?after=${newest?.id ?? 0}`, headers);
    await until(() => stream.status() === 200);
    const elsewhere = (await client(server.url, otherKey).post('/api/test-runs/report', { environment: 'staging', branch: 'main' })).body.data.test_run
      .id as number;
    const { runId } = await runUnderWay(1);
    await until(() => stream.events.some((event) => event.event === 'run' && event.data.id === runId));
    expect(typeof elsewhere).toBe('number');
    const run = stream.events.find((event) => event.data.id === runId)?.data;
    expect(run).toMatchObject({ id: runId, environment_name: 'staging', branch: 'main', total_count: 0 });
    expect(['pending', 'queued', 'running']).toContain(run.state);
    expect(stream.events.some((event) => event.data.id === elsewhere)).toBe(false);
    // It stays open while the list is: a list's stream with `after` has no end.
    expect(stream.ended()).toBe(false);
    await stream.close();
    const none = openStream('/api/test-runs/events?after=0', {});
    await until(() => none.ended());
    expect(none.status()).toBe(401);
  }, 30_000);

  it('when one key opens more streams than it may at once, then the one too many is refused with 429, and a closed one frees its place', async () => {
    const { runId } = await runUnderWay(1);
    const headers = { authorization: `Bearer ${projectKey}` };
    const streams = Array.from({ length: 8 }, () => openStream(`/api/test-runs/${runId}/events`, headers));
    await until(() => streams.every((stream) => stream.events.length > 0));
    const refused = openStream(`/api/test-runs/${runId}/events`, headers);
    await until(() => refused.ended());
    expect(refused.status()).toBe(429);
    await (streams.pop() as ReturnType<typeof openStream>).close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = openStream(`/api/test-runs/${runId}/events`, headers);
    await until(() => again.events.length > 0);
    expect(again.status()).toBe(200);
    await Promise.all([...streams, again].map((stream) => stream.close()));
  }, 30_000);
});

// Writers commit in any order: a transaction that began first may store its results last. The
// stream neither waits for it (results committed after it show at once) nor loses it.
describe.skipIf(!process.env.DATABASE_URL)('results committed out of order', () => {
  it('when a transaction that began first commits its results after later ones, then the stream sends every result once, before and after a reconnect', async () => {
    const { runId, ids } = await runUnderWay(4);
    const headers = { authorization: `Bearer ${projectKey}` };
    const stream = openStream(`/api/test-runs/${runId}/events`, headers);
    await until(() => stream.events.length > 0);

    // A writer takes its transaction id first and stores its result later.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let began: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      began = resolve;
    });
    const slow = server.sql.begin(async (tx) => {
      await tx`select pg_current_xact_id()`;
      began();
      await held;
      await insertResults(tx, { projectId, runId, shard: 1, attempts: attemptsOf(ids[0] as string, 'expected'), now: new Date() });
    });
    await started;

    // Later writers commit first: shown at once, though the slow one holds the horizon back.
    await store(runId, ids[1] as string, 'expected');
    const shownAt = Date.now();
    await until(() => stream.results().length === 1, 1000);
    expect(Date.now() - shownAt).toBeLessThan(1000);
    await store(runId, ids[2] as string, 'unexpected');
    await until(() => stream.results().length === 2, 1000);
    const away = stream.events.at(-1)?.id as string;
    expect(away.split('.').length).toBeGreaterThan(1);
    await stream.close();

    // The slow one commits while the client is away; back with Last-Event-ID, it comes, once.
    release();
    await slow;
    const back = openStream(`/api/test-runs/${runId}/events`, { ...headers, 'last-event-id': away });
    await until(() => back.results().length === 1);
    await store(runId, ids[3] as string, 'expected');
    await until(() => back.results().length === 2);
    await endRun(runId);
    await until(() => back.ended());
    expect(stream.results().map((result) => result.test_case_id)).toEqual([ids[1], ids[2]]);
    expect(back.results().map((result) => result.test_case_id)).toEqual([ids[0], ids[3]]);
  }, 30_000);
});
