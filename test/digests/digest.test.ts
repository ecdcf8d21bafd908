import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { attempt, attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// A fixture project whose tests are known: one turned flaky today, one was flaky yesterday only,
// one broke today after passing, one new today that never passed, one got 30% slower, two steady.
// 47 runs, one an hour: runs 1-23 on 1 November, 24-47 on 2 November (the digest's day).
let server: TestServer;
let api: ReturnType<typeof client>;
let environmentId: number;
let projectKey: string;
let projectId: number;
const clock = new TestClock(new Date('2026-11-01T00:30:00Z'));
const [turnedFlaky, oldFlaky, broke, neverPassed, slowed, steady1, steady2] = [1, 2, 3, 4, 5, 6, 7].map((n) => testId(n)) as string[] as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
// The broken test's title would run a script if a page made an element of it.
const HOSTILE = '<img src=x onerror="alert(1)"> broke & "quoted"';
const runIds: number[] = [0];
const runNumbers: number[] = [0];

type Line = { outcome: FinalOutcome; duration: number };

// A commit a run: a test that fails after passing broke on that commit, it did not flip (flaky).
async function reportRun(tests: Record<string, Line>): Promise<void> {
  clock.advance(60 * 60 * 1000);
  const run = (await api.post('/api/test-runs/report', { environment: 'nightly', commit: `c${runIds.length}` })).body.data.test_run;
  const ids = Object.keys(tests);
  await api.post(`/api/test-runs/${run.id}/shards/1/begin`, {
    tests: ids.map((id) => listedTest(id, { title: id === broke ? HOSTILE : `title ${id.slice(-3)}` })),
    complete: true,
  });
  const results = ids.flatMap((id) => {
    const { outcome, duration } = tests[id]!;
    return outcome === 'expected' ? [attempt(id, { duration })] : attemptsOf(id, outcome);
  });
  expect((await api.post(`/api/test-runs/${run.id}/results`, { shard: 1, results })).status).toBe(200);
  const failed = Object.values(tests).some((line) => line.outcome === 'unexpected');
  expect((await api.post(`/api/test-runs/${run.id}/shards/1/end`, { status: failed ? 'failed' : 'passed' })).status).toBe(200);
  await waitForRollups(server.sql);
  runIds.push(run.id);
  runNumbers.push(run.number);
}

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql);
  projectKey = project.key;
  projectId = project.projectId;
  api = client(server.url, project.key);
  const pass = (duration = 200): Line => ({ outcome: 'expected', duration });
  for (let run = 1; run <= 47; run++) {
    const tests: Record<string, Line> = {
      [turnedFlaky]: run === 35 || run === 40 ? { outcome: 'flaky', duration: 200 } : pass(),
      [oldFlaky]: run === 5 || run === 10 ? { outcome: 'flaky', duration: 200 } : pass(),
      [broke]: run >= 39 ? { outcome: 'unexpected', duration: 200 } : pass(),
      // 1000 ms ± 5%, then 30% slower from run 31 on.
      [slowed]: pass(Math.round((run > 30 ? 1300 : 1000) * (1 + ((run * 37) % 11) / 200 - 0.025))),
      [steady1]: pass(),
      [steady2]: pass(300),
    };
    if (run >= 44) tests[neverPassed] = { outcome: 'unexpected', duration: 200 };
    await reportRun(tests);
  }
  environmentId = (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'nightly').id;
}, 300_000);
afterAll(async () => server?.close());

const ids = (list: { test_case_id: string }[]) => list.map((test) => test.test_case_id);

describe("an environment's digest", () => {
  it('when the day is asked for, then it holds exactly the tests that turned flaky, broke and got slower, and the runs against the day before', async () => {
    const response = await api.get(`/api/digest?environment_id=${environmentId}&period=day`);
    expect(response.status).toBe(200);
    const digest = response.body.data.digest;
    expect(digest).toMatchObject({ period: 'day', from: '2026-11-02', to: '2026-11-02', environment_name: 'nightly' });
    // Runs 24-38 passed, 39-47 failed; every run of the day before passed.
    expect(digest.runs).toEqual({ runs: 24, passed_runs: 15, pass_rate: 0.625, previous: { runs: 23, passed_runs: 23, pass_rate: 1 } });
    expect(digest.turned_flaky).toEqual([expect.objectContaining({ test_case_id: turnedFlaky, run_id: runIds[35], run_number: runNumbers[35] })]);
    expect(digest.turned_broken).toEqual([expect.objectContaining({ test_case_id: broke, run_id: runIds[39], run_number: runNumbers[39] })]);
    expect(digest.slower).toEqual([expect.objectContaining({ test_case_id: slowed, started_run_id: runIds[31], started_run_number: runNumbers[31] })]);
    expect(ids(digest.flakiest).sort()).toEqual([turnedFlaky, oldFlaky].sort());
    expect(ids(digest.most_failing)).toEqual([neverPassed, broke]);
    expect(ids(digest.slowest)[0]).toBe(slowed);
  });

  it('when the week is asked for, then the flaky test of the day before turned flaky too, and nothing is compared with an empty week', async () => {
    const digest = (await api.get(`/api/digest?environment_id=${environmentId}`)).body.data.digest;
    expect(digest).toMatchObject({ period: 'week', from: '2026-10-27', to: '2026-11-02' });
    expect(digest.runs).toEqual({ runs: 47, passed_runs: 38, pass_rate: 0.809, previous: { runs: 0, passed_runs: 0, pass_rate: null } });
    expect(ids(digest.turned_flaky)).toEqual([oldFlaky, turnedFlaky]);
  });

  it("when an assistant asks MCP's get_digest, then it answers the API's digest", async () => {
    const mcp = new Client({ name: 'digest-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${projectKey}` } } }));
    try {
      const result = (await mcp.callTool({ name: 'get_digest', arguments: { environment_id: environmentId, period: 'day' } })) as {
        content: { text: string }[];
      };
      const fromApi = (await api.get(`/api/digest?environment_id=${environmentId}&period=day`)).body.data.digest;
      expect(JSON.parse(result.content[0]!.text)).toEqual(fromApi);
    } finally {
      await mcp.close();
    }
  });

  it('when a team lead opens the digest page, then it lists the same tests, links each to its page and the run where it turned, and escapes their titles', async () => {
    const { userId } = await seedUser(server.sql, [projectId], { role: 'viewer' });
    const token = await createLoginLink(server.sql, userId, clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const response = await fetch(`${server.url}/projects/${projectId}/digest?environment_id=${environmentId}&period=day`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const page = await response.text();
    const section = (heading: string) => new RegExp(`<h2 id="digest-${heading}">.*?</section>`, 's').exec(page)?.[0] ?? '';
    expect(section('turned-broken')).toContain(
      // The renderer escapes `<`, `&` and `"`; a `>` with no `<` before it makes no tag (docs/decisions/server-jsx.md).
      `<a href="/projects/${projectId}/tests/${broke}">&lt;img src=x onerror=&quot;alert(1)&quot;> broke &amp; &quot;quoted&quot;</a>`,
    );
    expect(section('turned-broken')).toContain(`failing since <a href="/projects/${projectId}/runs/${runIds[39]}">run #${runNumbers[39]}</a>`);
    expect(section('turned-flaky')).toContain(`first flaky in <a href="/projects/${projectId}/runs/${runIds[35]}">run #${runNumbers[35]}</a>`);
    expect(section('got-slower')).toContain(`/tests/${slowed}`);
    expect(page).toContain('24 runs, 62.5% passed');
    expect(page).not.toContain('<img src=x');
    const unknown = await fetch(`${server.url}/projects/${projectId}/digest?environment_id=99999`, { headers: { cookie } });
    expect(unknown.status).toBe(404);
  });

  it('when the environment or the period is wrong, then a 4xx names the field', async () => {
    const unknown = await api.get('/api/digest?environment_id=99999');
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body)).toContain('environment_id');
    const period = await api.get(`/api/digest?environment_id=${environmentId}&period=month`);
    expect(period.status).toBe(400);
    expect(JSON.stringify(period.body)).toContain('period');
  });
});
