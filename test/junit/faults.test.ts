import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../server/src/cli.ts';
import { multipartBody, sendBroken } from '../helpers/bodies.ts';
import { freePort, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

// JUnit uploads that break: a body cut inside its file part, clients that go away or stall
// mid-body, and files nested deeper than any runner nests. The server stays up, holds no
// transaction for a client, leaves nothing behind, and reads in time linear in the file.

const IDLE_S = 1;
let server: TestServer;
let key: string;
let spoolDir: string;
const savedTmp = process.env.TMPDIR;

beforeAll(async () => {
  // The server's spools go here (os.tmpdir() reads TMPDIR), so that one left behind is seen.
  spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-junit-faults-'));
  process.env.TMPDIR = spoolDir;
  server = await startTestServer({ env: { PROCTOR_UPLOAD_IDLE_S: String(IDLE_S) } });
  const project = await seedProject(server.sql);
  key = project.key;
  await seedEnvironment(server.sql, project.projectId, 'unit');
});
afterAll(async () => {
  await server?.close();
  process.env.TMPDIR = savedTmp;
  if (savedTmp === undefined) delete process.env.TMPDIR;
  fs.rmSync(spoolDir, { recursive: true, force: true });
});

const uploadUrl = (runKey: string) => `${server.url}/api/test-runs/junit?environment=unit&run_key=${runKey}`;

async function upload(
  runKey: string,
  files: { name: string; content: string }[],
): Promise<{ status: number; body: { error?: { message: string }; data?: unknown } }> {
  const { body, contentType } = multipartBody(files);
  const response = await fetch(uploadUrl(runKey), {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body: new Uint8Array(body),
  });
  return { status: response.status, body: await response.json() };
}

const SUITE = (cases: number, prefix = 't') =>
  `<testsuite name="s">\n${Array.from({ length: cases }, (_, i) => `<testcase classname="c" name="${prefix}${i}" time="0.001"/>`).join('\n')}\n</testsuite>\n`;

async function runsWithKey(runKey: string): Promise<number> {
  const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_runs where run_key = ${runKey}`;
  return row?.n ?? 0;
}

/**
 * Connections of this database inside a transaction and doing nothing for more than half a second
 * (a job between two statements is not one), with what they last ran. Real PostgreSQL only: PGlite
 * has no such view of its one session, and there the answers beside the stalled uploads show it.
 */
async function idleInTransaction(): Promise<string[]> {
  if (server.db.embedded) return [];
  const rows = await server.sql<{ query: string }[]>`
    select query from pg_stat_activity
    where datname = current_database() and state like 'idle in transaction%' and now() - state_change > interval '500 milliseconds'`;
  return rows.map((row) => row.query);
}

const spools = () => fs.readdirSync(spoolDir).filter((name) => name.startsWith('proctor-upload-'));

describe('JUnit uploads that break off', () => {
  it('when the body ends inside its file part (a report key, its XML broken off), then the answer is a 400 naming the file and line, and the server answers the next request', async () => {
    const head =
      '--x\r\ncontent-disposition: form-data; name="report"; filename="report.xml"\r\ncontent-type: application/xml\r\n\r\n<testsuite name="s">\n<testcase name';
    // In two pieces, as a network delivers them: the part has begun when its end does not come.
    const pieces = [Buffer.from(head), Buffer.from('="t"/>\n')];
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const piece = pieces.shift();
        if (!piece) return controller.close();
        controller.enqueue(new Uint8Array(piece));
        await new Promise((resolve) => setTimeout(resolve, 100));
      },
    });
    const response = await fetch(uploadUrl('cut-in-part'), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=x' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/^report\.xml:\d+: is cut off: the body ended inside it/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // All at once: the part is named if busboy began it, else the body.
    const whole = await fetch(uploadUrl('cut-in-part'), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=x' },
      body: head,
    });
    expect(whole.status).toBe(400);
    expect((await whole.json()).error.message).toMatch(/^(report\.xml:\d+: is cut off|body: is not well-formed multipart\/form-data)/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await runsWithKey('cut-in-part')).toBe(0);
    expect(spools()).toEqual([]);
  });

  it('when 10 uploads are abandoned and 10 stall mid-body, then the API keeps answering, nothing of them is stored or left on disk, and no transaction waits on them', async () => {
    const { body, contentType } = multipartBody([{ name: 'big.xml', content: SUITE(4000) }]);
    const headers = { authorization: `Bearer ${key}`, 'content-type': contentType };
    const half = Math.floor(body.length / 2);
    const abandoned = Array.from({ length: 10 }, (_, i) => sendBroken(uploadUrl(`abandoned-${i}`), 'POST', headers, body, half, 'abandoned', 30_000));
    const stalled = Array.from({ length: 10 }, (_, i) => sendBroken(uploadUrl(`stalled-${i}`), 'POST', headers, body, half, 'stalled', 30_000));
    await Promise.all(abandoned);
    // While the stalled ones wait: other requests, an upload of its own (one transaction at a time on PGlite) included.
    expect((await fetch(`${server.url}/api/test-runs`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const beside = await upload('beside-the-stalled', [{ name: 'ok.xml', content: SUITE(3) }]);
    expect(beside.status, JSON.stringify(beside.body)).toBe(200);
    expect(await idleInTransaction()).toEqual([]);
    const answers = await Promise.all(stalled);
    for (const answer of answers) {
      // Dropped after the idle time with a 408 (or the connection closed), not held.
      expect(answer.status === 408 || answer.status === null, JSON.stringify(answer)).toBe(true);
    }
    const [stored] = await server.sql<{ n: number }[]>`
      select count(*)::int as n from test_runs where run_key like 'abandoned-%' or run_key like 'stalled-%'`;
    expect(stored?.n).toBe(0);
    expect(await idleInTransaction()).toEqual([]);
    // Spools are removed as each upload stops; give the last removals a moment.
    for (let i = 0; i < 50 && spools().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(spools()).toEqual([]);
    expect((await upload('after-the-stalled', [{ name: 'ok.xml', content: SUITE(3) }])).status).toBe(200);
  }, 60_000);
});

describe('JUnit nested deeply', () => {
  /** The longest the event loop was blocked while `work` ran, in ms (the server runs in this process). */
  async function longestBlock<T>(work: () => Promise<T>): Promise<{ result: T; blockMs: number }> {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    try {
      const result = await work();
      return { result, blockMs: histogram.max / 1e6 };
    } finally {
      histogram.disable();
    }
  }

  it('when a file nests 20,000 testsuites, then it is refused at once with a 400 naming the line past the depth limit, and the event loop is not held', async () => {
    const levels = 20_000;
    const xml = `${Array.from({ length: levels }, (_, i) => `<testsuite name="s${i}"><testcase name="t${i}"/>`).join('\n')}\n${'</testsuite>'.repeat(levels)}\n`;
    const started = performance.now();
    const { result, blockMs } = await longestBlock(() => upload('nested-20000', [{ name: 'nested.xml', content: xml }]));
    console.log(
      `junit nesting: ${levels.toLocaleString('en')} nested testsuites (${(xml.length / 1024).toFixed(0)} kB) answered ${result.status} in ${(performance.now() - started).toFixed(0)} ms; the event loop's longest block ${blockMs.toFixed(1)} ms`,
    );
    expect(result.status).toBe(400);
    expect(result.body.error?.message).toBe('nested.xml:65: testsuites nest deeper than 64 levels here: JUnit XML of a test runner nests a few');
    expect(await runsWithKey('nested-20000')).toBe(0);
  });

  it('when 20,000 testsuites nest 60 deep, then every testcase is stored, as each testsuite is read once', async () => {
    const depth = 60;
    const chains = 20_000 / depth;
    const chain = (c: number) =>
      `${Array.from({ length: depth }, (_, d) => `<testsuite name="c${c}d${d}"><testcase classname="k" name="t${c}-${d}"/>`).join('\n')}\n${'</testsuite>'.repeat(depth)}`;
    const xml = `<testsuites>\n${Array.from({ length: Math.ceil(chains) }, (_, c) => chain(c)).join('\n')}\n</testsuites>\n`;
    // The same testcases in one flat testsuite first: the baseline of this machine, now.
    const flat = `<testsuite name="flat">\n${Array.from({ length: Math.ceil(chains) * depth }, (_, i) => `<testcase classname="k" name="f${i}"/>`).join('\n')}\n</testsuite>\n`;
    const flatStarted = performance.now();
    const baseline = await longestBlock(() => upload('flat-20000', [{ name: 'flat.xml', content: flat }]));
    const flatMs = performance.now() - flatStarted;
    expect(baseline.result.status).toBe(200);
    const started = performance.now();
    const { result, blockMs } = await longestBlock(() => upload('nested-60', [{ name: 'deep.xml', content: xml }]));
    console.log(
      `junit nesting: ${Math.ceil(chains) * depth} testsuites ${depth} deep (${(xml.length / 1024).toFixed(0)} kB) stored in ${(performance.now() - started).toFixed(0)} ms, the event loop's longest block ${blockMs.toFixed(1)} ms; the same testcases flat (${(flat.length / 1024).toFixed(0)} kB): ${flatMs.toFixed(0)} ms, longest block ${baseline.blockMs.toFixed(1)} ms`,
    );
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.data).toMatchObject({ files: [{ name: 'deep.xml', testcases: Math.ceil(chains) * depth }] });
  }, 120_000);
});

describe('the embedded server as a process, with uploads abandoned and stalled', () => {
  it('when 10 uploads are abandoned and 10 stall, then it answers the API meanwhile and stops on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-junit-embedded-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const saved = { ...process.env };
    const proctor = spawnProctor(['serve'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      PROCTOR_DATA_DIR: dataDir,
      DATABASE_URL: '',
      PROCTOR_DEMO: 'false',
      PROCTOR_EXECUTOR_CONCURRENCY: '0',
      PROCTOR_UPLOAD_IDLE_S: '5',
    });
    try {
      await waitForHealth(base, 90_000);
      // The CLI in this process, through the running server's embedded database, as `proctor` would.
      process.env.PROCTOR_DATA_DIR = dataDir;
      delete process.env.DATABASE_URL;
      let printed = '';
      const write = process.stdout.write;
      process.stdout.write = ((chunk: string) => {
        printed += chunk;
        return true;
      }) as typeof process.stdout.write;
      try {
        expect(await main(['project', 'create', '--name', 'uploads', '--repo', '/nonexistent'])).toBe(0);
        printed = '';
        expect(await main(['key', 'create', '--project', '1'])).toBe(0);
      } finally {
        process.stdout.write = write;
      }
      const apiKey = printed.trim();
      const authorization = `Bearer ${apiKey}`;
      const made = await fetch(`${base}/api/environments`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Unit', slug: 'unit' }),
      });
      expect(made.status).toBe(201);
      const { body, contentType } = multipartBody([{ name: 'big.xml', content: SUITE(4000) }]);
      const headers = { authorization, 'content-type': contentType };
      const url = (runKey: string) => `${base}/api/test-runs/junit?environment=unit&run_key=${runKey}`;
      const abandoned = Array.from({ length: 10 }, (_, i) => sendBroken(url(`abandoned-${i}`), 'POST', headers, body, body.length >> 1, 'abandoned', 60_000));
      const stalled = Array.from({ length: 10 }, (_, i) => sendBroken(url(`stalled-${i}`), 'POST', headers, body, body.length >> 1, 'stalled', 60_000));
      await Promise.all(abandoned);
      const small = multipartBody([{ name: 'ok.xml', content: SUITE(3) }]);
      const beside = await fetch(url('beside'), {
        method: 'POST',
        headers: { authorization, 'content-type': small.contentType },
        body: new Uint8Array(small.body),
      });
      expect(beside.status, await beside.text()).toBe(200);
      expect((await fetch(`${base}/api/test-runs`, { headers: { authorization } })).status).toBe(200);
      // SIGTERM while the stalled uploads are still open: they are dropped (no transaction waits on them) and the server stops.
      const signalled = Date.now();
      proctor.child.kill('SIGTERM');
      const code = await Promise.race([proctor.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 45_000))]);
      console.log(`junit uploads: the embedded server stopped ${Date.now() - signalled} ms after SIGTERM with 10 stalled uploads open`);
      expect(code).toBe(0);
      await Promise.all(stalled.map((answer) => answer.catch(() => undefined)));
    } finally {
      process.env = saved;
      proctor.child.kill('SIGKILL');
      await proctor.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
