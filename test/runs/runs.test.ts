import { attempt, listedTest } from '../helpers/attempts.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginShard, endShard } from '../../server/src/runs/ingest.ts';
import { insertResults, recordBatch } from '../../server/src/runs/results.ts';
import { finishSilentRuns } from '../../server/src/executor/sweeper.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProjectWithEnvironment, startTestServer, testId, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let projectId: number;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProjectWithEnvironment(server.sql, 'ci');
  projectId = project.projectId;
  api = client(server.url, project.key);
});
afterAll(async () => server?.close());

async function newRun(totalShards: number): Promise<number> {
  const response = await api.post('/api/test-runs/report', { environment: 'ci', total_shards: totalShards });
  expect(response.status).toBe(200);
  return response.body.data.test_run.id;
}

const listed = (n: number) => listedTest(testId(n), { title: `t${n}`, line: n });
const passed = (n: number) => attempt(testId(n));

describe('silent shards', () => {
  it('when a shard never ends, then the run is finished as error after the timeout, naming the shard', async () => {
    const runId = await newRun(2);
    const now = () => server.clock.now;
    await beginShard(server.sql, projectId, runId, 1, { tests: [listed(1)], commit: null, complete: true }, now());
    await beginShard(server.sql, projectId, runId, 2, { tests: [listed(2)], commit: null, complete: true }, now());
    await server.sql.begin((tx) => insertResults(tx, { projectId, runId, shard: 1, attempts: [passed(1)], now: now() }));
    await endShard(server.sql, projectId, runId, 1, { status: 'passed', errors: [] }, now());
    expect(await finishSilentRuns(server.sql, now(), 60_000)).toEqual([]);
    server.clock.advance(60_001);
    expect(await finishSilentRuns(server.sql, now(), 60_000)).toEqual([runId]);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'error', success_count: 1, total_count: 1 });
    expect(run.error_reason).toContain('shard 2 never ended');
  });

  it('when results arrive for a finished run, then they are refused with 409 so the reporter stops', async () => {
    const runId = await newRun(1);
    await endShard(server.sql, projectId, runId, 1, { status: 'passed', errors: [] }, server.clock.now);
    const late = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [passed(3)] });
    expect(late.status).toBe(409);
  });

  it('when a shard ends failed without a failing test (a config error), then the run is error with the errors recorded', async () => {
    const runId = await newRun(1);
    const response = await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed', errors: ['SyntaxError: Unexpected token in a.spec.ts'] });
    expect(response.body.data.state).toBe('error');
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run.error_reason).toContain('SyntaxError');
  });

  it('when the same batch is sent twice, then it is recorded once', async () => {
    const runId = await newRun(1);
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listed(1), listed(2)], complete: true });
    const first = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [passed(1), passed(2)] });
    const again = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [passed(1), passed(2)] });
    expect(first.body.data).toEqual({ received: 2, recorded: 2, test_run: { state: 'running', cancelled_by: null } });
    expect(again.body.data).toEqual({ received: 2, recorded: 0, test_run: { state: 'running', cancelled_by: null } });
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ total_count: 2, success_count: 2, state: 'running' });
  });
});

describe('result batches', () => {
  const tried = (
    n: number,
    retry: number,
    status: 'passed' | 'failed' | 'skipped',
    final: null | 'expected' | 'unexpected' | 'flaky' | 'skipped',
    text: string | null = null,
  ) =>
    attempt(testId(n), {
      retry,
      status,
      final,
      duration: 10 + retry,
      error_message: text,
      stdout_tail: text,
      started_at: '2026-11-21T10:00:00.000Z',
      finalError: text,
      totalDuration: 20,
    });
  // passed, failed, flaky (a failed try, then a passed one) and skipped: five attempts, four tests.
  const mixed = (base: number) => [
    tried(base, 0, 'passed', 'expected'),
    tried(base + 1, 0, 'failed', 'unexpected', 'Error: boom'),
    tried(base + 2, 0, 'failed', null, 'Error: first try'),
    tried(base + 2, 1, 'passed', 'flaky', 'Error: first try'),
    tried(base + 3, 0, 'skipped', 'skipped'),
  ];
  const storedCount = async (runId: number) =>
    (await server.sql<{ n: number }[]>`select count(*)::int as n from test_results where test_run_id = ${runId}`)[0]?.n;

  it('when a batch overlaps one already stored, then only its new attempts are recorded and counted', async () => {
    const runId = await newRun(1);
    const first = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [passed(1), passed(2)] });
    const overlapping = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [passed(2), passed(3)] });
    expect(first.body.data).toEqual({ received: 2, recorded: 2, test_run: { state: 'running', cancelled_by: null } });
    expect(overlapping.body.data).toEqual({ received: 2, recorded: 1, test_run: { state: 'running', cancelled_by: null } });
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ total_count: 3, success_count: 3 });
    expect(await storedCount(runId)).toBe(3);
  });

  it('when the same batch arrives eight times at once, then it is stored and counted once', async () => {
    const runId = await newRun(1);
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: mixed(10) })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(answers.reduce((sum, answer) => sum + answer.body.data.recorded, 0)).toBe(5);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ total_count: 4, success_count: 1, failed_count: 1, flaky_count: 1, skipped_count: 1 });
    expect(await storedCount(runId)).toBe(5);
  });

  const awkward = 'tab\there\nnew line\r\nback\\slash \\N \\. \\\\N é 日本 🎭 "quotes" \'single\'';
  const written = async (runId: number) =>
    server.sql<
      {
        retry: number;
        status: string;
        error_message: string | null;
        stdout_tail: string | null;
        final_error_message: string | null;
        outcome: string | null;
        is_final: boolean;
        started_at: Date;
        duration: number;
      }[]
    >`
      select retry, status, error_message, stdout_tail, final_error_message, outcome, is_final, started_at, duration
      from test_results where test_run_id = ${runId} order by test_case_id, retry`;

  for (const write of ['copy', 'insert'] as const) {
    it(`when attempts carry tabs, newlines, backslashes and non-ASCII text, then the ${write} path stores them exactly as sent`, async (context) => {
      if (write === 'copy' && server.db.embedded) context.skip();
      const runId = await newRun(1);
      const batch = [tried(20, 0, 'failed', null, awkward), tried(20, 1, 'failed', 'unexpected', awkward), tried(21, 0, 'passed', 'expected')];
      expect((await recordBatch(server.sql, { projectId, runId, shard: 1, attempts: batch, now: server.clock.now }, write)).recorded).toBe(3);
      const rows = await written(runId);
      expect(rows.map((row) => [row.retry, row.status, row.error_message, row.stdout_tail, row.final_error_message, row.outcome, row.is_final])).toEqual([
        [0, 'failed', awkward, awkward, null, null, false],
        [1, 'failed', awkward, awkward, awkward, 'failed', true],
        [0, 'passed', null, null, null, 'passed', true],
      ]);
      expect(rows.map((row) => row.started_at.toISOString())).toEqual(Array(3).fill('2026-11-21T10:00:00.000Z'));
    });
  }

  it('when an attempt holds a NUL character, then the batch is refused with 400 naming the field and nothing is stored', async () => {
    const runId = await newRun(1);
    const response = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [passed(1), { ...passed(2), stdout_tail: 'a\u0000b' }] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('body.results.1.stdout_tail: must not contain the NUL character (\\u0000)');
    expect(await storedCount(runId)).toBe(0);
  });

  it('when an attempt holds a lone UTF-16 surrogate, then the batch is stored, retried alike, with U+FFFD in its place', async () => {
    const runId = await newRun(1);
    const cut = { ...passed(2), stdout_tail: 'emoji cut \ud83d', final: { ...passed(2).final, error_message: '\ude00 low half' } };
    const batch = { shard: 1, results: [passed(1), cut] };
    const first = await api.post(`/api/test-runs/${runId}/results`, batch);
    const retried = await api.post(`/api/test-runs/${runId}/results`, batch);
    expect([first.status, retried.status]).toEqual([200, 200]);
    expect(await storedCount(runId)).toBe(2);
    const [row] = await server.sql<{ stdout_tail: string; final_error_message: string }[]>`
      select stdout_tail, final_error_message from test_results where test_run_id = ${runId} and test_case_id = ${testId(2)}`;
    expect(row).toEqual({ stdout_tail: 'emoji cut \ufffd', final_error_message: '\ufffd low half' });
  });

  it('when a listed test has a title over 2,000 characters, then it is cut with a marker and its chunk is taken whole', async () => {
    const runId = await newRun(1);
    const long = { ...listed(1), title: `${'x'.repeat(1987)}\u{1f600}${'y'.repeat(3000)}`, suites: ['s'.repeat(2500)] };
    const begun = await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [long, listed(2)], complete: true });
    expect(begun.status).toBe(200);
    const rows = await server.sql<{ test_case_id: string; title: string }[]>`
      select test_case_id, title from test_run_tests where test_run_id = ${runId} order by test_case_id`;
    expect(rows.map((row) => row.test_case_id)).toEqual([testId(1), testId(2)]);
    expect(rows[0]?.title).toHaveLength(2000 - 1);
    expect(rows[0]?.title.endsWith('x…[truncated]')).toBe(true);
  });

  it('when a shard lists a test twice, then the begin is refused with 400 naming the second, and nothing is stored', async () => {
    const runId = await newRun(1);
    const begun = await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listed(1), listed(2), listed(1)], complete: true });
    expect(begun.status).toBe(400);
    expect(begun.body.error.message).toBe(`body.tests.2.id: test "${testId(1)}" is listed already, as tests.0`);
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_run_tests where test_run_id = ${runId}`;
    expect(row?.n).toBe(0);
  });

  it('when a duration is beyond what PostgreSQL stores, then the batch is refused with 400 naming the field', async () => {
    const runId = await newRun(1);
    const response = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [{ ...passed(1), duration: 2 ** 31 }] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/^body\.results\.0\.duration: /);
    expect(await storedCount(runId)).toBe(0);
  });
});

describe('the run page and headers', () => {
  async function summaryUrl(buildUrl?: string): Promise<string> {
    const created = await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1, ...(buildUrl === undefined ? {} : { build_url: buildUrl }) });
    return (await api.get(`/api/test-runs/${created.body.data.test_run.id}`)).body.data.test_run.testRun.summary_url;
  }

  it.each(['javascript:alert(document.domain)', 'data:text/html,<script>alert(1)</script>', ' javascript:x'])(
    'when a build URL is %j, then the run page shows it as text, never as a link',
    async (buildUrl) => {
      const page = await fetch(await summaryUrl(buildUrl));
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(html).not.toMatch(/<a href="\s*(javascript|data):/i);
      expect(html).toContain('· build ');
    },
  );

  it('when a run link is older than 30 days, then it is a 410; a link whose expiry was edited is a 404', async () => {
    const url = await summaryUrl();
    expect((await fetch(url)).status).toBe(200);
    const token = new URL(url).searchParams.get('token') as string;
    const [expires, signature] = token.split('.');
    const stretched = url.replace(token, `${Number(expires) + 86_400 * 365}.${signature}`);
    expect((await fetch(stretched)).status).toBe(404);
    server.clock.advance(31 * 86_400_000);
    try {
      const expired = await fetch(url);
      expect(expired.status).toBe(410);
      expect((await expired.json()).error.message).toContain('expired');
    } finally {
      server.clock.advance(-31 * 86_400_000);
    }
  });

  it('when the suite has no runner projects, then its page shows no empty project beside a test, in a failure group or as a breakdown', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1 })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1), { title: 'unnamed project', runner_project: '' })] });
    await api.post(`/api/test-runs/${runId}/results`, {
      shard: 1,
      results: [attempt(testId(1), { final: 'unexpected', status: 'failed', failureGroupId: 'fg-unnamed' })],
    });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    const html = await (await fetch(run.summary_url)).text();
    expect(html).toContain('<div class="file">a.spec.ts</div>');
    expect(html).toContain('unnamed project</li>');
    expect(html).not.toContain('()');
    expect(html).not.toContain('By runner project');
  });

  it('when a build URL is http(s), then it is a link that sends no referrer', async () => {
    const html = await (await fetch(await summaryUrl('https://ci.example.test/build/7'))).text();
    expect(html).toContain('<a href="https://ci.example.test/build/7" rel="noreferrer">');
  });

  it('when any page, API answer, error or badge is served, then it carries nosniff, no-referrer and a policy that forbids framing', async () => {
    const urls = [await summaryUrl(), `${server.url}/healthz`, `${server.url}/api/nowhere`, `${server.url}/badges/${projectId}/ci.svg`];
    for (const url of urls) {
      const answer = await fetch(url);
      expect(answer.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), url).toBe('no-referrer');
      expect(answer.headers.get('content-security-policy'), url).toContain("frame-ancestors 'none'");
    }
  });
});

describe('run keys', () => {
  it('when a report names the run key of a run of another environment, then it is a 409 and joins nothing', async () => {
    await seedEnvironment(server.sql, projectId, 'prod-keys');
    const staging = await api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-77', total_shards: 2 });
    expect(staging.status).toBe(200);
    const prod = await api.post('/api/test-runs/report', { environment: 'prod-keys', run_key: 'build-77', total_shards: 2 });
    expect(prod.status).toBe(409);
    expect(prod.body.error.message).toContain('body.run_key');
    const shard2 = await api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-77', total_shards: 2 });
    expect(shard2.body.data.test_run.id).toBe(staging.body.data.test_run.id);
  });

  it('when a run has ended, then its run key is not handed out again', async () => {
    const first = await api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-78', total_shards: 1 });
    const runId = first.body.data.test_run.id;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listed(1)], complete: true });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed', errors: [] });
    expect((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun.state).not.toBe('running');
    const again = await api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-78', total_shards: 1 });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('has ended');
  });
});
