import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fail, fixtureRuns, flaky, type Line, pass, signedInCookie, wobbled } from '../helpers/digest-fixture.ts';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// A fixture project whose tests are known: one turned flaky today, one was flaky yesterday only,
// one flaky as often today as yesterday, one flaky yesterday once and today in a quarter of its
// runs, one broke today after passing, one new today that never passed, one got 30% slower, two
// steady. 47 runs, one an hour: runs 1-23 on 1 November, 24-47 on 2 November (the digest's day).
let server: TestServer;
let api: ReturnType<typeof client>;
let environmentId: number;
let projectKey: string;
let projectId: number;
let runs: ReturnType<typeof fixtureRuns>;
const clock = new TestClock(new Date('2026-11-01T00:30:00Z'));
const [turnedFlaky, oldFlaky, broke, neverPassed, slowed, steady1, steady2, steadyFlaky, flakier] = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => testId(n)) as [
  string,
  string,
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
const runIds = () => runs.runIds;
const runNumbers = () => runs.runNumbers;

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql);
  projectKey = project.key;
  projectId = project.projectId;
  api = client(server.url, project.key);
  runs = fixtureRuns(api, server.sql, 'nightly', (id) => ({ title: id === broke ? HOSTILE : `title ${id.slice(-3)}` }));
  for (let run = 1; run <= 47; run++) {
    const tests: Record<string, Line> = {
      [turnedFlaky]: run === 35 || run === 40 ? flaky : pass(),
      [oldFlaky]: run === 5 || run === 10 ? flaky : pass(),
      // 2 of 23 runs yesterday, 2 of 24 today: no rise.
      [steadyFlaky]: [8, 16, 32, 44].includes(run) ? flaky : pass(),
      // 1 of 23 runs yesterday, 6 of 24 today.
      [flakier]: [12, 26, 30, 34, 38, 42, 46].includes(run) ? flaky : pass(),
      [broke]: run >= 39 ? fail : pass(),
      // 1000 ms ± 2.5%, then 30% slower from run 31 on.
      [slowed]: pass(wobbled(run > 30 ? 1300 : 1000, run)),
      [steady1]: pass(),
      [steady2]: pass(300),
    };
    if (run >= 44) tests[neverPassed] = fail;
    clock.advance(60 * 60 * 1000);
    await runs.report(tests);
  }
  environmentId = (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'nightly').id;
}, 300_000);
afterAll(async () => server?.close());

const ids = (list: { test_case_id: string }[]) => list.map((test) => test.test_case_id);
const testsIn = (html: string) => [...html.matchAll(/\/tests\/([0-9a-f]{20}-[0-9a-f]{20})"/g)].map((match) => match[1]);

describe("an environment's digest", () => {
  it('when the day is asked for, then it holds exactly the tests that turned flaky, broke, got slower and got flakier, and the runs against the day before', async () => {
    const response = await api.get(`/api/digest?environment_id=${environmentId}&period=day`);
    expect(response.status).toBe(200);
    const digest = response.body.data.digest;
    expect(digest).toMatchObject({ period: 'day', from: '2026-11-02', to: '2026-11-02', environment_name: 'nightly' });
    // Runs 24-38 passed, 39-47 failed; every run of the day before passed.
    expect(digest.runs).toEqual({ runs: 24, passed_runs: 15, pass_rate: 0.625, previous: { runs: 23, passed_runs: 23, pass_rate: 1 } });
    expect(digest.turned_flaky).toEqual([expect.objectContaining({ test_case_id: turnedFlaky, run_id: runIds()[35], run_number: runNumbers()[35] })]);
    expect(digest.turned_broken).toEqual([expect.objectContaining({ test_case_id: broke, run_id: runIds()[39], run_number: runNumbers()[39] })]);
    expect(digest.slower).toEqual([expect.objectContaining({ test_case_id: slowed, started_run_id: runIds()[31], started_run_number: runNumbers()[31] })]);
    expect(ids(digest.flakiest).sort()).toEqual([turnedFlaky, oldFlaky, steadyFlaky, flakier].sort());
    // Against the 14 days before: the test flaky in a quarter of today's runs first, then the one flaky today only.
    expect(digest.flakier).toEqual([
      expect.objectContaining({
        test_case_id: flakier,
        flaky_rate: 0.25,
        flaky_runs: 6,
        runs_counted: 24,
        previous_flaky_rate: 0.043,
        previous_runs_counted: 23,
      }),
      expect.objectContaining({
        test_case_id: turnedFlaky,
        flaky_rate: 0.083,
        flaky_runs: 2,
        runs_counted: 24,
        previous_flaky_rate: 0,
        previous_runs_counted: 23,
      }),
    ]);
    expect(ids(digest.most_failing)).toEqual([neverPassed, broke]);
    expect(ids(digest.slowest)[0]).toBe(slowed);
  });

  it('when the week is asked for, then the flaky tests of the day before turned flaky too, and against an empty look-back every flaky test got flakier', async () => {
    const digest = (await api.get(`/api/digest?environment_id=${environmentId}`)).body.data.digest;
    expect(digest).toMatchObject({ period: 'week', from: '2026-10-27', to: '2026-11-02' });
    expect(digest.runs).toEqual({ runs: 47, passed_runs: 38, pass_rate: 0.809, previous: { runs: 0, passed_runs: 0, pass_rate: null } });
    expect(ids(digest.turned_flaky)).toEqual([oldFlaky, steadyFlaky, flakier, turnedFlaky]);
    // Nothing ran in the 14 days before the week: every flaky test rose from no runs, the most flaky first.
    expect(ids(digest.flakier).slice(0, 2)).toEqual([flakier, steadyFlaky]);
    expect(ids(digest.flakier).sort()).toEqual([turnedFlaky, oldFlaky, steadyFlaky, flakier].sort());
    expect(digest.flakier.map((t: { previous_flaky_rate: number | null }) => t.previous_flaky_rate)).toEqual([null, null, null, null]);
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
    const cookie = await signedInCookie(server, projectId, clock.now);
    const response = await fetch(`${server.url}/projects/${projectId}/digest?environment_id=${environmentId}&period=day`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const page = await response.text();
    const section = (heading: string) => new RegExp(`<h2 id="digest-${heading}">.*?</section>`, 's').exec(page)?.[0] ?? '';
    expect(section('turned-broken')).toContain(
      // The renderer escapes `<`, `&` and `"`; a `>` with no `<` before it makes no tag (docs/decisions/server-jsx.md).
      `<a href="/projects/${projectId}/tests/${broke}">&lt;img src=x onerror=&quot;alert(1)&quot;> broke &amp; &quot;quoted&quot;</a>`,
    );
    expect(section('turned-broken')).toContain(`failing since <a href="/projects/${projectId}/runs/${runIds()[39]}">run #${runNumbers()[39]}</a>`);
    expect(section('turned-flaky')).toContain(`first flaky in <a href="/projects/${projectId}/runs/${runIds()[35]}">run #${runNumbers()[35]}</a>`);
    expect(section('got-slower')).toContain(`/tests/${slowed}`);
    expect(section('got-slower')).toContain(`since <a href="/projects/${projectId}/runs/${runIds()[31]}">run #${runNumbers()[31]}</a>`);
    expect(section('got-flakier')).toContain(`<a href="/projects/${projectId}/tests/${flakier}">title ${flakier.slice(-3)}</a>`);
    expect(section('got-flakier')).toContain('flaky in 25% of 24 runs, was 4.3% in the 14 days before');
    expect(testsIn(section('got-flakier'))).toEqual([flakier, turnedFlaky]);
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
