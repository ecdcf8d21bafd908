import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';
import { seeded } from '../helpers/seeded.ts';

// Histories reported as the reporter does (begin, results, end), one run an hour; the rollup job
// looks at each ended run's tests for a slowdown.
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let projectKey: string;
const clock = new TestClock(new Date('2026-11-01T08:00:00Z'));

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  projectKey = project.key;
  api = client(server.url, project.key);
});
afterAll(async () => server?.close());

/** A passing run of `environment` with each test's duration (ms); returns its number. */
async function reportRun(environment: string, durations: Record<string, number>): Promise<number> {
  clock.advance(60 * 60 * 1000);
  const run = (await api.post('/api/test-runs/report', { environment, commit: 'c1' })).body.data.test_run;
  const ids = Object.keys(durations);
  await api.post(`/api/test-runs/${run.id}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)), complete: true });
  const results = await api.post(`/api/test-runs/${run.id}/results`, {
    shard: 1,
    results: ids.map((id) => attempt(id, { duration: durations[id] })),
  });
  expect(results.status).toBe(200);
  expect((await api.post(`/api/test-runs/${run.id}/shards/1/end`, { status: 'passed' })).status).toBe(200);
  await waitForRollups(server.sql);
  runIds.push(run.id as number);
  return run.number as number;
}

const runIds: number[] = [];

describe('tests that got slower', () => {
  const [slowed, spiky, steady] = [1, 2, 3].map((n) => testId(n)) as [string, string, string];
  const numbers: number[] = [];

  beforeAll(async () => {
    const random = seeded(11);
    const noise = (base: number) => Math.round(base * (1 + (random() * 2 - 1) * 0.08));
    for (let run = 1; run <= 40; run++) {
      numbers.push(
        await reportRun('ci', {
          // 30% slower from the 21st run on, for 20 runs.
          [slowed]: noise(run > 20 ? 1300 : 1000),
          // Single runs 30% slower now and then: the same size, not held.
          [spiky]: noise(random() < 1 / 6 ? 1300 : 1000),
          [steady]: noise(1000),
        }),
      );
    }
  }, 240_000);

  it('when a test is 30% slower for 20 runs, then it is listed with the run where it started', async () => {
    const response = await api.get('/api/slower-tests');
    expect(response.status).toBe(200);
    const tests = response.body.data.tests as { test_case_id: string; started_run_number: number; rise: number; baseline_ms: number }[];
    expect(tests.map((test) => test.test_case_id)).toEqual([slowed]);
    expect(tests[0]!.started_run_number).toBe(numbers[20]);
    expect(tests[0]!.rise).toBeGreaterThan(0.2);
    expect(tests[0]!.baseline_ms).toBeGreaterThan(900);
    expect(response.body.pagination.total).toBe(1);
  });

  it("when the test's page is opened, then it says since which run the test is slower and by how much", async () => {
    const { userId } = await seedUser(server.sql, [projectId], { role: 'viewer' });
    const token = await createLoginLink(server.sql, userId, clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const page = await (await fetch(`${server.url}/projects/${projectId}/tests/${slowed}`, { headers: { cookie } })).text();
    expect(page).toMatch(new RegExp(`<strong>\\d+% slower</strong> in ci since <a href="/projects/${projectId}/runs/\\d+">run #${numbers[20]}</a>`));
    const steadyPage = await (await fetch(`${server.url}/projects/${projectId}/tests/${steady}`, { headers: { cookie } })).text();
    expect(steadyPage).not.toContain('got slower');
  });

  it('when the last slow run is compared with the first, then the slowed test is marked slower since the run where it started', async () => {
    const { userId } = await seedUser(server.sql, [projectId], { role: 'viewer' });
    const token = await createLoginLink(server.sql, userId, clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const url = `${server.url}/projects/${projectId}/runs/${runIds[39]}/compare/${runIds[0]}`;
    const page = await (await fetch(url, { headers: { cookie } })).text();
    const row = (id: string) => new RegExp(`<tr data-test="${id}">.*?</tr>`).exec(page)?.[0] ?? '';
    expect(row(slowed)).toMatch(
      new RegExp(`<span class="tag slower">slower</span> \\d+% since <a href="/projects/${projectId}/runs/${runIds[20]}">run #${numbers[20]}</a>`),
    );
    expect(page.match(/class="tag slower"/g)).toHaveLength(1);
  });

  it("when an assistant asks MCP's get_test about it, then the answer says where and since which run it is slower", async () => {
    const mcp = new Client({ name: 'slower-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${projectKey}` } } }));
    try {
      const result = (await mcp.callTool({ name: 'get_test', arguments: { test_case_id: slowed } })) as { content: { text: string }[] };
      const answer = JSON.parse(result.content[0]!.text);
      expect(answer.slower).toEqual([expect.objectContaining({ environment: 'ci', since_run_id: runIds[20], since_run_number: numbers[20] })]);
      const steadyResult = (await mcp.callTool({ name: 'get_test', arguments: { test_case_id: steady } })) as { content: { text: string }[] };
      expect(JSON.parse(steadyResult.content[0]!.text).slower).toEqual([]);
    } finally {
      await mcp.close();
    }
  });

  it('when asked for one test, then only its finding answers', async () => {
    expect((await api.get(`/api/slower-tests?test_case_id=${slowed}`)).body.data.tests).toHaveLength(1);
    expect((await api.get(`/api/slower-tests?test_case_id=${spiky}`)).body.data.tests).toHaveLength(0);
  });

  it('when the test comes back to its old duration, then the flag is removed', async () => {
    for (let run = 0; run < 12; run++) await reportRun('ci', { [slowed]: 1000, [spiky]: 1000, [steady]: 1000 });
    expect((await api.get('/api/slower-tests')).body.data.tests).toEqual([]);
  }, 120_000);

  it('when the environment is unknown, then 404 names the field', async () => {
    const response = await api.get('/api/slower-tests?environment_id=99999');
    expect(response.status).toBe(404);
    expect(JSON.stringify(response.body)).toContain('environment_id');
  });
});
