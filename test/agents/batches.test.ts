// Units leased several at once, to run in one Playwright (its start paid once per batch): a batch
// is of one runner project, within the agent's budget and its part of the work packed against the
// run's other agents (the leases of one run taken one at a time); each unit is reported and ended
// on its own by the reporter, with its own status, and a crash of the batch sends only its unended
// units to another agent. And a run
// none of whose agents is left to plan it ends `error` about a lease time after the last went silent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishUnplannedRuns } from '../../server/src/agents/index.ts';
import { resolveSettings } from '../../reporter/src/reporter/settings.ts';
import { UnitBatch } from '../../reporter/src/reporter/unit-batch.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

const LEASE_S = 30;

function unit(file: string, ids: string[], project = 'chromium') {
  return { runner_project: project, file, tests: ids.map((id) => ({ id, line: `[${project}] › ${file} › test ${id.slice(16, 20)}` })) };
}

describe('agents: batches of units', () => {
  let server: TestServer;
  let api: Api;
  const clock = new TestClock('live');

  beforeAll(async () => {
    server = await startTestServer({ clock });
    const seeded = await seedProject(server.sql);
    api = client(server.url, seeded.key);
    await seedEnvironment(server.sql, seeded.projectId, 'staging');
    // History: t601..t606 took 4, 3, 2, 1, 1 and 1 s; t607 (another project's) 1 s.
    const durations = {
      [testId(601)]: 4000,
      [testId(602)]: 3000,
      [testId(603)]: 2000,
      [testId(604)]: 1000,
      [testId(605)]: 1000,
      [testId(606)]: 1000,
      [testId(607)]: 1000,
    };
    const ids = Object.keys(durations);
    const runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)) });
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.map((id) => attempt(id, { duration: durations[id] })) });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
    await waitForRollups(server.sql);
  });
  afterAll(() => server?.close());

  const agents = new Map<number, Api>();
  async function agentRun(runKey: string): Promise<number> {
    return (await api.post('/api/test-runs/agent-run', { environment: 'staging', run_key: runKey })).body.data.test_run.id as number;
  }
  async function join(runId: number, name: string) {
    const answer = await api.post(`/api/test-runs/${runId}/agents`, { name });
    expect(answer.status, answer.text).toBe(201);
    agents.set(answer.body.data.agent.id, client(server.url, answer.body.data.agent_token));
    return answer.body.data as { agent: { id: number }; reporter_key: string };
  }
  const as = (agentId: number) => agents.get(agentId) as Api;
  const lease = async (runId: number, agentId: number, budget?: number) => {
    const answer = await as(agentId).post(`/api/test-runs/${runId}/units/lease`, { agent_id: agentId, ...(budget ? { budget_ms: budget } : {}) });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data;
  };
  const files = (answer: { units: { file: string }[] }) => answer.units.map((u) => u.file);

  async function plannedRun(runKey: string) {
    const runId = await agentRun(runKey);
    const a = await join(runId, 'a');
    const units = [601, 602, 603, 604, 605, 606].map((n) => unit(`f${n}.spec.ts`, [testId(n)]));
    units.push(unit('f607.spec.ts', [testId(607)], 'firefox'));
    await as(a.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.agent.id, units });
    return { runId, a };
  }

  it('when an agent leases with a budget, then it gets the longest units of one runner project whose estimates fit in the budget', async () => {
    const { runId, a } = await plannedRun('batch-sizes');
    // One agent: its share is the whole 13 s; the budget of 6 s takes 4 s, then 2 s (3 s would pass it).
    const first = await lease(runId, a.agent.id, 6000);
    expect(files(first)).toEqual(['f601.spec.ts', 'f603.spec.ts']);
    expect(first.unit).toEqual(first.units[0]);
    expect(files(await lease(runId, a.agent.id, 6000))).toEqual(['f602.spec.ts', 'f604.spec.ts', 'f605.spec.ts', 'f606.spec.ts']);
    // Firefox's unit never joins chromium's: one Playwright's locations select in every project it is given.
    expect(files(await lease(runId, a.agent.id, 6000))).toEqual(['f607.spec.ts']);
    const beat = await as(a.agent.id).post(`/api/test-runs/${runId}/agents/${a.agent.id}/heartbeat`);
    expect(beat.body.data.leased_units).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('when two agents lease with budgets at the same moment, then their batches are one partition of the run (each unit once, none left over), and an agent without a budget gets one unit', async () => {
    const { runId, a } = await plannedRun('batch-two');
    const b = await join(runId, 'b');
    // 12 s of chromium over 2 agents: the run's lock takes the leases one at a time, so the second packs against the first.
    const [one, two] = await Promise.all([lease(runId, a.agent.id, 60_000), lease(runId, b.agent.id, 60_000)]);
    const chromium = [...one.units, ...two.units] as { unit: number; file: string; estimate_ms: number }[];
    expect(chromium.map((u) => u.file).sort()).toEqual(['f601.spec.ts', 'f602.spec.ts', 'f603.spec.ts', 'f604.spec.ts', 'f605.spec.ts', 'f606.spec.ts']);
    const sum = (units: { estimate_ms: number }[]) => units.reduce((total, u) => total + u.estimate_ms, 0);
    expect([sum(one.units), sum(two.units)].sort()).toEqual([6000, 6000]);
    // An agent that asks for no budget (one before batches) gets one unit, as it always did: firefox's.
    const c = await join(runId, 'c');
    const old = await lease(runId, c.agent.id);
    expect(files(old)).toEqual(['f607.spec.ts']);
    expect(old.unit.file).toBe('f607.spec.ts');
  });

  it('when an agent leases while another is part way through its batch, then it takes the work that evens out their ends', async () => {
    const { runId, a } = await plannedRun('batch-later');
    const b = await join(runId, 'b');
    expect(files(await lease(runId, b.agent.id, 4000))).toEqual(['f601.spec.ts']);
    // b has run 2.5 s of its 4 s: 1.5 s left. Of the 8 s of chromium free, a takes 5 s and leaves b 3 s
    // (had b just leased its unit, a would take 6 s).
    clock.advance(2500);
    await as(b.agent.id).post(`/api/test-runs/${runId}/agents/${b.agent.id}/heartbeat`);
    expect(files(await lease(runId, a.agent.id, 60_000))).toEqual(['f602.spec.ts', 'f604.spec.ts', 'f606.spec.ts']);
  });

  it('when a second agent leases while the first holds units never run, then it takes its count share of the rest, not every free unit', async () => {
    // A suite's first run in an environment (as hotwired/turbo's 27 files were): no unit has an estimate.
    // PostgreSQL's NULL in the held units' int[] once came back as NaN, which made the second agent's
    // estimates NaN and gave it all 20 units left after the first agent's 7 (455 of 481 tests).
    const runId = await agentRun('batch-unknown');
    const a = await join(runId, 'a');
    const b = await join(runId, 'b');
    const units = Array.from({ length: 12 }, (_, i) => unit(`g${701 + i}.spec.ts`, [testId(701 + i)]));
    await as(a.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.agent.id, units });
    const first = await lease(runId, a.agent.id, 100_000);
    // 12 free over 2 agents, halved: ceil(13 / 4) = 4.
    expect(first.units.map((u: { estimate_ms: number | null }) => u.estimate_ms)).toEqual([null, null, null, null]);
    // 8 free, the first agent holding 4 of unknown length: ceil(9 / 4) = 3, and 5 stay free.
    const second = await lease(runId, b.agent.id, 100_000);
    expect(files(second)).toEqual(['g705.spec.ts', 'g706.spec.ts', 'g707.spec.ts']);
    expect(second.remaining).toBe(12);
  });

  it("when a batch runs in one Playwright, then the reporter ends each unit's shard with its own tests and its own status, and a crash sends only the unended units to another agent", async () => {
    const { runId, a } = await plannedRun('batch-report');
    const b = await join(runId, 'b');
    // 4 s with 1 s and 1 s beside, while b takes the 3 s, the 2 s and a 1 s unit.
    const batch = await lease(runId, a.agent.id, 60_000);
    expect(files(batch)).toEqual(['f601.spec.ts', 'f604.spec.ts', 'f605.spec.ts']);
    const [one, two, three] = batch.units as { unit: number; runner_project: string; file: string; test_ids: string[] }[];
    if (!one || !two || !three) throw new Error('a batch of three');

    const resolved = resolveSettings({}, { PROCTOR_URL: server.url, PROCTOR_API_KEY: a.reporter_key, PROCTOR_RUN_ID: String(runId) });
    if (!resolved.ok) throw new Error(resolved.reason);
    const reporter = new UnitBatch(resolved.settings, [one, two, three]);
    // A setup test no unit names goes with the unit of its file, else the batch's first.
    reporter.start({
      projectDir: '.',
      tests: [listedTest(testId(601)), listedTest(testId(604)), listedTest(testId(605)), listedTest(testId(699))],
      complete: false,
      shard: 1,
      totalShards: 1,
      startedAt: new Date(),
    });
    reporter.add(attempt(testId(601)));
    reporter.add(attempt(testId(604), { final: 'unexpected' }));
    reporter.add(attempt(testId(699)));
    // 605's test never ended: Playwright was interrupted first.
    const report = await reporter.finish('interrupted', []);
    expect(report).toMatchObject({ runId, delivered: 3, total: 3, failures: [] });
    const shards = await server.sql<{ shard: number; status: string }[]>`
      select shard, status from test_run_shards where test_run_id = ${runId} order by shard`;
    // Each unit's own: 601's passed (its setup test too), 604's failed, 605's had a test that never ended.
    expect(shards).toEqual([
      { shard: one.unit, status: 'passed' },
      { shard: two.unit, status: 'failed' },
      { shard: three.unit, status: 'interrupted' },
    ]);
    const results = await server.sql<{ test_id: string; shard: number }[]>`
      select test_case_id as test_id, shard from test_results where test_run_id = ${runId} order by test_case_id`;
    expect(results.map((row) => [row.test_id, row.shard])).toEqual([
      [testId(601), one.unit],
      [testId(604), two.unit],
      [testId(699), one.unit],
    ]);

    // b is idle: the two split the 7 s left (3, 2, 1 and firefox's 1), so a's next batch is the 3 s
    // unit alone. Its Playwright is killed before the reporter ended it: each unit of a batch crashes
    // on its own, and goes (once) to the other agent.
    const next = await lease(runId, a.agent.id, 60_000);
    expect(files(next)).toEqual(['f602.spec.ts']);
    for (const crashed of next.units) {
      const answer = await as(a.agent.id).post(`/api/test-runs/${runId}/units/${crashed.unit}/crash`, { agent_id: a.agent.id, error: 'killed' });
      expect(answer.body.data).toEqual({ retried: true });
    }
    // a holds nothing now: b takes the 3 s unit, a's part of the rest is the 2 s and a 1 s one.
    expect(files(await lease(runId, b.agent.id, 60_000))).toEqual(['f602.spec.ts']);
  });

  it("when a batch's Playwright reports an error of no test, then every unit's shard ends with Playwright's status", async () => {
    const { runId, a } = await plannedRun('batch-global-error');
    const batch = await lease(runId, a.agent.id, 60_000);
    const [one, two] = batch.units as { unit: number; runner_project: string; file: string; test_ids: string[] }[];
    if (!one || !two) throw new Error('a batch of two');
    const resolved = resolveSettings({}, { PROCTOR_URL: server.url, PROCTOR_API_KEY: a.reporter_key, PROCTOR_RUN_ID: String(runId) });
    if (!resolved.ok) throw new Error(resolved.reason);
    const reporter = new UnitBatch(resolved.settings, [one, two]);
    const ids = [...one.test_ids, ...two.test_ids];
    reporter.start({ projectDir: '.', tests: ids.map((id) => listedTest(id)), complete: false, shard: 1, totalShards: 1, startedAt: new Date() });
    for (const id of ids) reporter.add(attempt(id));
    await reporter.finish('failed', ['Error: globalTeardown failed']);
    const shards = await server.sql<{ status: string }[]>`
      select status from test_run_shards where test_run_id = ${runId} and shard = any(${[one.unit, two.unit]}::int[]) order by shard`;
    expect(shards).toEqual([{ status: 'failed' }, { status: 'failed' }]);
  });

  it('when every agent of a run goes silent before planning it, then the sweep ends it `error` naming them a lease time later, and not before', async () => {
    const runId = await agentRun('all-killed');
    await join(runId, 'ci-1');
    await join(runId, 'ci-2');
    // Both were killed right after joining: nothing more is heard from them.
    clock.advance((LEASE_S - 5) * 1000);
    expect(await finishUnplannedRuns(server.sql, clock.now, LEASE_S * 1000)).not.toContain(runId);
    const waiting = await agentRun('no-agent-yet');
    clock.advance(10_000);
    const ended = await finishUnplannedRuns(server.sql, clock.now, LEASE_S * 1000);
    expect(ended).toContain(runId);
    // A run no agent joined yet waits for its first.
    expect(ended).not.toContain(waiting);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run.state).toBe('error');
    expect(run.error_reason).toBe(`every agent of the run (ci-1, ci-2) went silent for ${LEASE_S} s before planning it: none is left to plan it`);
  });
});
