// Likely failures first (issue 56) on a server: an environment's order strategy set through its API,
// a run of agents handing its units out by it and showing it, and GET /api/test-order's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

function unit(file: string, ids: string[]) {
  return { runner_project: 'chromium', file, tests: ids.map((id) => ({ id, line: `[chromium] › ${file} › test ${id.slice(16, 20)}` })) };
}

// The history both environments get: on main, `slow` takes 3 s and `mid` 1 s and pass, `broken`
// (50 ms) fails; `fresh` never ran.
const slow = testId(1);
const mid = testId(2);
const broken = testId(3);
const fresh = testId(4);
const PLAN = [unit('slow.spec.ts', [slow]), unit('broken.spec.ts', [broken]), unit('mid.spec.ts', [mid]), unit('fresh.spec.ts', [fresh])];

describe('failures first on a server', () => {
  let server: TestServer;
  let api: Api;
  const environments: Record<string, number> = {};
  let runKeys = 0;

  beforeAll(async () => {
    server = await startTestServer({ clock: new TestClock('live') });
    const seeded = await seedProject(server.sql);
    api = client(server.url, seeded.key);
    for (const slug of ['ordered', 'longest']) {
      environments[slug] = await seedEnvironment(server.sql, seeded.projectId, slug);
      await reportRun(api, slug, 'main', { [slow]: ['expected', 3000], [mid]: ['expected', 1000], [broken]: ['unexpected', 50] });
    }
    await waitForRollups(server.sql);
  });
  afterAll(() => server?.close());

  /** A run of agents of the environment on `branch`, planned with PLAN, and every unit its one agent leases, in order. */
  async function leasedFiles(
    environment: string,
    branch: string | undefined,
    changed: string[] | null = null,
  ): Promise<{ runId: number; files: string[]; changedSince: string | null }> {
    const made = await api.post('/api/test-runs/agent-run', { environment, run_key: `${environment}-${branch}-${++runKeys}`, branch });
    expect(made.status, made.text).toBe(200);
    const runId = made.body.data.test_run.id as number;
    const joined = (await api.post(`/api/test-runs/${runId}/agents`, { name: 'a' })).body.data;
    const agent = client(server.url, joined.agent_token);
    const planned = await agent.put(`/api/test-runs/${runId}/units`, { agent_id: joined.agent.id, units: PLAN, changed_test_ids: changed });
    expect(planned.body, planned.text).toEqual({ data: { planned: true, units: 4 } });
    const files: string[] = [];
    for (;;) {
      const lease = (await agent.post(`/api/test-runs/${runId}/units/lease`, { agent_id: joined.agent.id })).body.data;
      if (!lease.unit) break;
      files.push(lease.unit.file);
    }
    return { runId, files, changedSince: joined.changed_since };
  }

  it('when an environment is set to failures-first through its API, then it says so, and a new one is duration', async () => {
    const set = await api.patch(`/api/environments/${environments.ordered}`, { order_strategy: 'failures-first' });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.environment.order_strategy).toBe('failures-first');
    expect((await api.get(`/api/environments/${environments.longest}`)).body.data.environment.order_strategy).toBe('duration');
    const refused = await api.patch(`/api/environments/${environments.ordered}`, { order_strategy: 'random' });
    expect(refused.status).toBe(400);
  });

  it('when agents lease a failures-first run, then the test that failed last time comes first, the new one next, then longest first; and the run shows the strategy', async () => {
    const { runId, files } = await leasedFiles('ordered', 'main');
    expect(files).toEqual(['broken.spec.ts', 'fresh.spec.ts', 'slow.spec.ts', 'mid.spec.ts']);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run.order_strategy).toBe('failures-first');
    const page = await (await fetch(run.summary_url as string)).text();
    expect(page).toContain('data-order-strategy="failures-first">likely failures first</strong>');
  });

  it('when the environment stays duration, then its run of agents goes longest first (unknown first) and shows it', async () => {
    const { runId, files } = await leasedFiles('longest', 'main');
    expect(files).toEqual(['fresh.spec.ts', 'slow.spec.ts', 'mid.spec.ts', 'broken.spec.ts']);
    expect((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun.order_strategy).toBe('duration');
  });

  it("when a reporter's run is shown, then it names no order strategy: Playwright chose its order", async () => {
    const made = await api.post('/api/test-runs/report', { environment: 'ordered' });
    expect((await api.get(`/api/test-runs/${made.body.data.test_run.id}`)).body.data.test_run.testRun.order_strategy).toBeNull();
  });

  it("when a CI asks for the environment's test order, then the answer ranks the last run's failure first with its reason and names that run", async () => {
    const answer = await api.get('/api/test-order?environment=ordered&branch=main');
    expect(answer.status, answer.text).toBe(200);
    const { data } = answer.body;
    expect(data).toMatchObject({ environment: 'ordered', branch: 'main', strategy: 'failures-first', last_run: { branch: 'main' } });
    expect(data.tests.map((test: { id: string }) => test.id)).toEqual([broken, slow, mid]);
    expect(data.tests[0]).toMatchObject({ risk_rank: 1, reasons: ['failed_last_run', 'failure_rate'], failed_last_run: true, failure_rate: 1 });
    expect(data.tests[1]).toMatchObject({ risk_rank: null, reasons: [], duration_ms: 3000 });
    // Asked for the duration order, the failure goes where its 50 ms put it: last.
    const longest = await api.get('/api/test-order?environment=ordered&branch=main&strategy=duration');
    expect(longest.body.data.tests.map((test: { id: string }) => test.id)).toEqual([slow, mid, broken]);
    expect((await api.get('/api/test-order?environment=nowhere')).status).toBe(404);
  });

  it("when a branch has no run of its own, then the mainline's last run counts as its last run; a branch with one counts its own", async () => {
    const { files } = await leasedFiles('ordered', 'feature-x');
    expect(files[0]).toBe('broken.spec.ts');
    const fallback = (await api.get('/api/test-order?environment=ordered&branch=feature-x')).body.data;
    expect(fallback.last_run).toMatchObject({ branch: 'main' });
    expect(fallback.tests[0]).toMatchObject({ id: broken, failed_last_run: true });
    // On a branch where it passed last, it failed no last run: only the window's rate still ranks it.
    await reportRun(api, 'ordered', 'fixed', { [slow]: ['expected', 3000], [mid]: ['expected', 1000], [broken]: ['expected', 50] });
    await waitForRollups(server.sql);
    const own = (await api.get('/api/test-order?environment=ordered&branch=fixed')).body.data;
    expect(own.last_run).toMatchObject({ branch: 'fixed' });
    expect(own.tests[0]).toMatchObject({ id: broken, failed_last_run: false, reasons: ['failure_rate'] });
  });

  it("when a branch's last passing run has a commit, then agents are told it, and the tests the planning agent says changed since rank after new ones, before the rates", async () => {
    const commit = 'c0ffee0123456789abcdef0123456789abcdef01';
    await reportRun(api, 'ordered', 'changes', { [slow]: ['expected', 3000], [mid]: ['expected', 1000], [broken]: ['expected', 50] }, commit);
    await waitForRollups(server.sql);
    const { files, changedSince } = await leasedFiles('ordered', 'changes', [mid]);
    expect(changedSince).toBe(commit);
    expect(files).toEqual(['fresh.spec.ts', 'mid.spec.ts', 'broken.spec.ts', 'slow.spec.ts']);
    // Not known (an agent that could not tell): the order of the rates alone.
    expect((await leasedFiles('ordered', 'changes', null)).files).toEqual(['fresh.spec.ts', 'broken.spec.ts', 'slow.spec.ts', 'mid.spec.ts']);
    // A duration environment does not ask.
    expect((await leasedFiles('longest', 'main')).changedSince).toBeNull();
    expect((await api.get('/api/test-order?environment=ordered&branch=changes')).body.data.changed_since).toMatchObject({ commit });
  });

  it("when a run of agents names no branch (agents on a workspace, which learn it from the checkout), then agents are told the mainline's last passing commit", async () => {
    const commit = 'feed0123456789abcdef0123456789abcdef0123';
    await reportRun(api, 'ordered', 'main', { [slow]: ['expected', 3000], [mid]: ['expected', 1000], [broken]: ['expected', 50] }, commit);
    await waitForRollups(server.sql);
    const { files, changedSince } = await leasedFiles('ordered', undefined, [slow]);
    expect(changedSince).toBe(commit);
    expect(files[0]).toBe('fresh.spec.ts');
    expect(files[1]).toBe('slow.spec.ts');
  });
});

/** A reporter's run of the environment on `branch`: each test's outcome and duration. */
async function reportRun(
  api: Api,
  environment: string,
  branch: string,
  tests: Record<string, ['expected' | 'unexpected', number]>,
  commit: string | null = null,
): Promise<void> {
  const ids = Object.keys(tests);
  const runId = (await api.post('/api/test-runs/report', { environment, branch, commit })).body.data.test_run.id;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)) });
  const results = ids.map((id) => {
    const [final, duration] = tests[id] as ['expected' | 'unexpected', number];
    return attempt(id, { final, duration });
  });
  const recorded = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
  expect(recorded.status, recorded.text).toBe(200);
  const failed = Object.values(tests).some(([final]) => final === 'unexpected');
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failed ? 'failed' : 'passed' });
}
