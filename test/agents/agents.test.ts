// The agents' protocol over HTTP: a CI build's run found by its run key, joining, the first plan
// winning, units leased longest first by the environment's history, leases that lapse going to
// another agent, cancel reaching agents, and the run ending when its last unit's shard ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRunBody } from '../../reporter/src/agent/agent.ts';
import { agentSettings } from '../../reporter/src/cli/agent.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

const LEASE_S = 30;

/** A unit of one file: its tests' `--test-list` lines name them. */
function unit(file: string, ids: string[], project = 'chromium') {
  return { runner_project: project, file, tests: ids.map((id) => ({ id, line: `[${project}] › ${file} › test ${id.slice(16, 20)}` })) };
}

describe('agents', () => {
  let server: TestServer;
  let api: Api;
  const clock = new TestClock('live');
  let projectId: number;

  beforeAll(async () => {
    server = await startTestServer({ clock });
    const seeded = await seedProject(server.sql);
    projectId = seeded.projectId;
    api = client(server.url, seeded.key);
    await seedEnvironment(server.sql, projectId, 'staging');
  });
  afterAll(() => server?.close());

  async function agentRun(runKey: string): Promise<number> {
    const answer = await api.post('/api/test-runs/agent-run', { environment: 'staging', run_key: runKey });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data.test_run.id as number;
  }

  /** Each agent's own client: its token is the only credential its plan, leases and heartbeats take. */
  const agents = new Map<number, Api>();
  const as = (agentId: number | undefined) => agents.get(agentId as number) as Api;

  async function join(runId: number, name: string) {
    const answer = await api.post(`/api/test-runs/${runId}/agents`, { name });
    expect(answer.status, answer.text).toBe(201);
    const joined = answer.body.data as {
      agent: { id: number };
      reporter_key: string;
      agent_token: string;
      checkout: Record<string, unknown>;
      test_run: { state: string; planned: boolean };
    };
    agents.set(joined.agent.id, client(server.url, joined.agent_token));
    return joined;
  }

  const lease = async (runId: number, agentId: number) => (await as(agentId).post(`/api/test-runs/${runId}/units/lease`, { agent_id: agentId })).body.data;
  const runOf = async (runId: number) => (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun as Record<string, unknown>;
  const state = async (runId: number) => (await runOf(runId)).state as string;

  it('when the agents of one build ask for its run, then they share one run, pending for agents until the first joins', async () => {
    const first = await agentRun('build-1');
    expect(await agentRun('build-1')).toBe(first);
    expect(await agentRun('build-2')).not.toBe(first);
    const [row] = await server.sql<
      { state: string; distribution: string; origin: string }[]
    >`select state, distribution, origin from test_runs where id = ${first}`;
    expect(row).toEqual({ state: 'pending', distribution: 'agents', origin: 'agent' });

    const joined = await join(first, 'runner-1');
    expect(joined.test_run).toEqual({ id: first, state: 'queued', planned: false });
    expect(joined.checkout).toMatchObject({ repo_url: '/nonexistent', commit: null, tags: [], test_case_ids: [] });
    const [key] = await server.sql<{ test_run_id: number; scope: string }[]>`select test_run_id, scope from api_keys where test_run_id = ${first}`;
    expect(key).toEqual({ test_run_id: first, scope: 'report' });
  });

  it("when the agents of a merge request's pipeline ask for its run, then the body they send names the request and the run shows it", async () => {
    const pipeline = { PROCTOR_URL: server.url, PROCTOR_API_KEY: 'prc_p_x', CI_PIPELINE_ID: '4242', CI_MERGE_REQUEST_IID: '17', CI_COMMIT_SHA: 'abc123' };
    const { target } = agentSettings({ environment: 'staging' }, pipeline);
    expect(target).toMatchObject({ kind: 'build', runKey: 'agents-gitlab-4242', pullRequest: 17, commit: 'abc123' });
    const body = buildRunBody(target as Extract<typeof target, { kind: 'build' }>);
    expect(body).toMatchObject({ run_key: 'agents-gitlab-4242', pull_request: 17 });
    const answer = await api.post('/api/test-runs/agent-run', body);
    expect(answer.status, answer.text).toBe(200);
    expect(await runOf(answer.body.data.test_run.id)).toMatchObject({ pull_request: 17, commit: 'abc123' });
    // A branch's pipeline names none, and its body leaves the field out (a server before 0.2.0 refuses it).
    const branch = agentSettings({ environment: 'staging' }, { ...pipeline, CI_MERGE_REQUEST_IID: '', CI_PIPELINE_ID: '4243' }).target;
    expect(buildRunBody(branch as Extract<typeof target, { kind: 'build' }>)).not.toHaveProperty('pull_request');
  });

  it('when several agents plan one run, then the first plan stands and its units go longest first by history, unknown first', async () => {
    // History in the environment: t1 and t2 take 100 and 300 ms, t3 takes 1000 ms; t4 never ran.
    await reportRunWithDurations(api, { [testId(1)]: 100, [testId(2)]: 300, [testId(3)]: 1000 });
    await waitForRollups(server.sql);

    const runId = await agentRun('build-plan');
    const a = await join(runId, 'a');
    const b = await join(runId, 'b');
    const plan = [unit('short.spec.ts', [testId(1), testId(2)]), unit('long.spec.ts', [testId(3)]), unit('new.spec.ts', [testId(4), testId(1)])];
    const first = await as(a.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.agent.id, commit: 'abc123', units: plan });
    expect(first.body).toEqual({ data: { planned: true, units: 3 } });
    const second = await as(b.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: b.agent.id, commit: 'def456', units: plan.slice(0, 1) });
    expect(second.body).toEqual({ data: { planned: false, units: 3 } });
    const [run] = await server.sql<
      { total_shards: number; test_run_head_sha: string }[]
    >`select total_shards, test_run_head_sha from test_runs where id = ${runId}`;
    expect(run).toEqual({ total_shards: 3, test_run_head_sha: 'abc123' });
    expect((await join(runId, 'c')).checkout.commit).toBe('abc123');

    const order = [await lease(runId, a.agent.id), await lease(runId, b.agent.id), await lease(runId, a.agent.id)];
    expect(order.map((l) => [l.unit.file, l.unit.estimate_ms])).toEqual([
      ['new.spec.ts', null],
      ['long.spec.ts', 1000],
      ['short.spec.ts', 400],
    ]);
    expect(order[0].unit).toMatchObject({ unit: 3, runner_project: 'chromium', test_ids: [testId(4), testId(1)] });
    expect(order[0].unit.tests[0]).toBe(`[chromium] › new.spec.ts › test ${testId(4).slice(16, 20)}`);
    expect(order.map((l) => l.remaining)).toEqual([3, 3, 3]);
    const none = await lease(runId, b.agent.id);
    expect(none).toEqual({ unit: null, units: [], remaining: 3, test_run: { state: 'queued', planned: true }, plan: false });
  });

  it('when no agent has planned the run, then the first agent still heard from is the one asked to, and another takes over when it goes silent', async () => {
    const runId = await agentRun('build-planner');
    const a = await join(runId, 'a');
    const b = await join(runId, 'b');
    expect(await lease(runId, a.agent.id)).toEqual({ unit: null, units: [], remaining: 0, test_run: { state: 'queued', planned: false }, plan: true });
    expect(await lease(runId, b.agent.id)).toMatchObject({ unit: null, test_run: { planned: false }, plan: false });
    // A lists the suite for longer than a lease without a word: B is asked to plan instead.
    clock.advance(LEASE_S * 1000 + 1000);
    expect((await lease(runId, b.agent.id)).plan).toBe(true);
    await as(b.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: b.agent.id, units: [unit('one.spec.ts', [testId(500)])] });
    expect(await lease(runId, a.agent.id)).toMatchObject({ unit: { unit: 1 }, remaining: 1, test_run: { planned: true }, plan: false });
  });

  it('when agents lease at once, then every unit goes to exactly one of them', async () => {
    const runId = await agentRun('build-race');
    const agents = await Promise.all(Array.from({ length: 6 }, (_, i) => join(runId, `agent-${i}`)));
    // Some of a config's default project, which Playwright names ''.
    const units = Array.from({ length: 20 }, (_, i) => unit(`f${i}.spec.ts`, [testId(100 + i)], i % 2 ? 'chromium' : ''));
    await as(agents[0]?.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: agents[0]?.agent.id, units });
    const leased: string[] = [];
    await Promise.all(
      agents.map(async (agent) => {
        for (let next = await lease(runId, agent.agent.id); next.unit; next = await lease(runId, agent.agent.id)) leased.push(next.unit.file);
      }),
    );
    expect(leased.sort()).toEqual(units.map((u) => u.file).sort());
  });

  it('when an agent stops beating, then its unit goes to another agent after the lease, and the first hears it lost it', async () => {
    const runId = await agentRun('build-lease');
    const a = await join(runId, 'a');
    const b = await join(runId, 'b');
    expect((await join(runId, 'x')).checkout).toBeTruthy();
    await as(a.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.agent.id, units: [unit('only.spec.ts', [testId(200)])] });
    expect((await lease(runId, a.agent.id)).unit.unit).toBe(1);
    expect(await lease(runId, b.agent.id)).toMatchObject({ unit: null, remaining: 1 });

    // A beats within its lease: it keeps the unit past the first lease's end.
    clock.advance((LEASE_S - 5) * 1000);
    const beat = await as(a.agent.id).post(`/api/test-runs/${runId}/agents/${a.agent.id}/heartbeat`);
    expect(beat.body.data).toEqual({ test_run: { state: 'queued' }, leased_units: [1] });
    clock.advance(10_000);
    expect((await lease(runId, b.agent.id)).unit).toBeNull();

    // Then it stops: one lease later, B gets the unit, and A's next beat no longer holds it.
    clock.advance(LEASE_S * 1000 + 1000);
    const taken = await lease(runId, b.agent.id);
    expect(taken.unit).toMatchObject({ unit: 1, file: 'only.spec.ts' });
    const [row] = await server.sql<{ agent_id: number; leases: number }[]>`select agent_id, leases from test_run_units where test_run_id = ${runId}`;
    expect(row).toEqual({ agent_id: b.agent.id, leases: 2 });
    expect((await as(a.agent.id).post(`/api/test-runs/${runId}/agents/${a.agent.id}/heartbeat`)).body.data.leased_units).toEqual([]);
  });

  it("when every unit's shard ends, then the run ends with the counts of what its agents' reporters sent, a result sent twice counted once", async () => {
    const runId = await agentRun('build-end');
    const a = await join(runId, 'a');
    const reporter = client(server.url, a.reporter_key);
    await as(a.agent.id).put(`/api/test-runs/${runId}/units`, {
      agent_id: a.agent.id,
      units: [unit('one.spec.ts', [testId(301)]), unit('two.spec.ts', [testId(302), testId(303)])],
    });
    for (let next = await lease(runId, a.agent.id); next?.unit; next = await lease(runId, a.agent.id)) {
      const shard = next.unit.unit as number;
      const ids = next.unit.test_ids as string[];
      expect((await reporter.post(`/api/test-runs/${runId}/shards/${shard}/begin`, { tests: ids.map((id) => listedTest(id)) })).status).toBe(200);
      const results = { shard, results: ids.map((id) => attempt(id, { final: id === testId(303) ? 'unexpected' : 'expected' })) };
      expect((await reporter.post(`/api/test-runs/${runId}/results`, results)).status).toBe(200);
      // The unit's lease lapsed and another agent sent the same results again: recorded once.
      expect((await reporter.post(`/api/test-runs/${runId}/results`, results)).status).toBe(200);
      expect(await state(runId)).toBe('running');
      expect((await reporter.post(`/api/test-runs/${runId}/shards/${shard}/end`, { status: 'passed' })).status).toBe(200);
    }
    const run = await runOf(runId);
    expect(run).toMatchObject({ state: 'failed', total_count: 3, success_count: 2, failed_count: 1, total_shards: 2 });
    // The agent's token and the reporter's key ended with the run: the agent hears of the end from the refusal.
    const after = await as(a.agent.id).post(`/api/test-runs/${runId}/units/lease`, { agent_id: a.agent.id });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toBe(`agent ${a.agent.id}'s token ended with its run ${runId} (failed)`);
    expect((await reporter.get(`/api/test-runs/${runId}`)).status).toBe(401);
  });

  it("when the run is cancelled, then the agent's heartbeat is refused saying so and no unit is handed out", async () => {
    const runId = await agentRun('build-cancel');
    const a = await join(runId, 'a');
    await as(a.agent.id).put(`/api/test-runs/${runId}/units`, {
      agent_id: a.agent.id,
      units: [unit('one.spec.ts', [testId(401)]), unit('two.spec.ts', [testId(402)])],
    });
    expect((await lease(runId, a.agent.id)).unit).not.toBeNull();
    expect((await api.post(`/api/test-runs/${runId}/cancel`, { reason: 'not needed' })).status).toBe(200);
    const beat = await as(a.agent.id).post(`/api/test-runs/${runId}/agents/${a.agent.id}/heartbeat`);
    expect(beat.status).toBe(401);
    expect(beat.body).toEqual({
      data: null,
      error: { message: `agent ${a.agent.id}'s token ended with its run ${runId} (cancelled)`, code: 'run_ended', run_state: 'cancelled' },
    });
    expect((await as(a.agent.id).post(`/api/test-runs/${runId}/units/lease`, { agent_id: a.agent.id })).status).toBe(401);
    const [leased] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_run_units where test_run_id = ${runId} and leases > 0`;
    expect(leased?.n).toBe(1);
  });

  it('when an agent joins a run it cannot serve, or plans nothing, then the answer says why', async () => {
    const ended = await agentRun('build-ended');
    const a = await join(ended, 'a');
    await as(a.agent.id).put(`/api/test-runs/${ended}/units`, { agent_id: a.agent.id, units: [] });
    expect(await runOf(ended)).toMatchObject({ state: 'error', error_reason: "the run's selection leaves no test to run" });
    const late = await api.post(`/api/test-runs/${ended}/agents`, { name: 'late' });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain('has ended (error)');

    // A run of the reporter in CI, running in its own shards, is not the agents'.
    const reported = (await api.post('/api/test-runs/report', { environment: 'staging', total_shards: 2 })).body.data.test_run.id;
    const refused = await api.post(`/api/test-runs/${reported}/agents`, { name: 'a' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('static shards');

    expect((await api.post('/api/test-runs/999999/agents', { name: 'a' })).status).toBe(404);
    // Leases are an agent's own: a project key's, or another agent's token, are refused.
    const stranger = await api.post(`/api/test-runs/${ended}/units/lease`, { agent_id: a.agent.id });
    expect(stranger.status).toBe(403);
    const b = await agentRun('build-other');
    const other = await join(b, 'b');
    expect((await as(other.agent.id).post(`/api/test-runs/${ended}/units/lease`, { agent_id: a.agent.id })).status).toBe(403);
    expect((await as(a.agent.id).post(`/api/test-runs/${ended}/agents/${a.agent.id}/heartbeat`)).status).toBe(401);
  });

  it('when a plan or a join is malformed, then a 400 names the field and nothing is written', async () => {
    const runId = await agentRun('build-bad');
    const a = await join(runId, 'a');
    const badId = await as(a.agent.id).put(`/api/test-runs/${runId}/units`, {
      agent_id: a.agent.id,
      units: [{ runner_project: 'p', file: 'f', tests: [{ id: 'nope', line: 'x' }] }],
    });
    expect(badId.status).toBe(400);
    expect(badId.body.error.message).toContain('units.0.tests.0.id');
    const empty = await as(a.agent.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.agent.id, units: [{ runner_project: 'p', file: 'f', tests: [] }] });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain('units.0.tests');
    const [count] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_run_units where test_run_id = ${runId}`;
    expect(count?.n).toBe(0);
    expect((await api.post(`/api/test-runs/${runId}/agents`, { name: '' })).body.error.message).toContain('body.name');
    expect((await api.post('/api/test-runs/agent-run', { environment: 'no where', run_key: 'k' })).body.error.message).toContain('body.environment');
    expect((await api.post('/api/test-runs/agent-run', { environment: 'staging' })).body.error.message).toContain('body.run_key');
  });
});

/** A run reported in the environment whose tests took the given durations. */
async function reportRunWithDurations(api: Api, durations: Record<string, number>): Promise<void> {
  const ids = Object.keys(durations);
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)) });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.map((id) => attempt(id, { duration: durations[id] })) });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
}
