// A unit that crashed (its Playwright ended without its reporter ending the unit) is run once more,
// on another agent while one is active; a second crash fails it, and the run ends `error` with each
// crash's reason, on its page too. Agents learn their place in the run's join order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

const LEASE_S = 30;

function unit(file: string, ids: string[], project = 'chromium') {
  return { runner_project: project, file, tests: ids.map((id) => ({ id, line: `[${project}] › ${file} › test ${id.slice(16, 20)}` })) };
}

describe('agents: crashed units', () => {
  let server: TestServer;
  let api: Api;
  const clock = new TestClock('live');

  beforeAll(async () => {
    server = await startTestServer({ clock });
    const seeded = await seedProject(server.sql);
    api = client(server.url, seeded.key);
    await seedEnvironment(server.sql, seeded.projectId, 'staging');
  });
  afterAll(() => server?.close());

  const agents = new Map<number, Api>();
  const as = (agentId: number) => agents.get(agentId) as Api;

  async function agentRun(runKey: string): Promise<number> {
    const answer = await api.post('/api/test-runs/agent-run', { environment: 'staging', run_key: runKey });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data.test_run.id as number;
  }

  async function join(runId: number, name: string) {
    const answer = await api.post(`/api/test-runs/${runId}/agents`, { name });
    expect(answer.status, answer.text).toBe(201);
    const joined = answer.body.data as { agent: { id: number; name: string; index: number; joined: number }; agent_token: string; reporter_key: string };
    agents.set(joined.agent.id, client(server.url, joined.agent_token));
    return { ...joined.agent, reporterKey: joined.reporter_key };
  }

  const lease = async (runId: number, agentId: number) => (await as(agentId).post(`/api/test-runs/${runId}/units/lease`, { agent_id: agentId })).body.data;
  const beat = (runId: number, agentId: number) => as(agentId).post(`/api/test-runs/${runId}/agents/${agentId}/heartbeat`);
  const crash = (runId: number, agentId: number, unitNumber: number, error: string) =>
    as(agentId).post(`/api/test-runs/${runId}/units/${unitNumber}/crash`, { agent_id: agentId, error });
  const runOf = async (runId: number) => (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun as Record<string, unknown>;

  it('when agents join a run, then each learns its place in the join order and how many joined so far', async () => {
    const runId = await agentRun('build-order');
    expect(await join(runId, 'first')).toMatchObject({ name: 'first', index: 0, joined: 1 });
    expect(await join(runId, 'second')).toMatchObject({ name: 'second', index: 1, joined: 2 });
    expect(await join(runId, 'third')).toMatchObject({ name: 'third', index: 2, joined: 3 });
  });

  it("when a unit crashes, then it goes to another agent, never back to its own while another is active; crashing again, the run ends error naming the unit and each agent's reason, on its page too", async () => {
    const runId = await agentRun('build-crash');
    const a = await join(runId, 'agent-a');
    const b = await join(runId, 'agent-b');
    await as(a.id).put(`/api/test-runs/${runId}/units`, {
      agent_id: a.id,
      units: [unit('crashes.spec.ts', [testId(601)]), unit('passes.spec.ts', [testId(602)])],
    });
    const first = await lease(runId, a.id);
    expect(first.unit).toMatchObject({ unit: 1, file: 'crashes.spec.ts' });
    const second = await lease(runId, b.id);
    expect(second.unit).toMatchObject({ unit: 2 });

    const crashed = await crash(runId, a.id, 1, 'Playwright exited (code 1): the web server port is taken');
    expect(crashed.status, crashed.text).toBe(200);
    expect(crashed.body.data).toEqual({ retried: true });
    expect((await beat(runId, a.id)).body.data.leased_units).toEqual([]);
    // B is active (it holds unit 2): A, asking again and again, never gets its crashed unit back.
    for (let i = 0; i < 3; i++) expect(await lease(runId, a.id)).toMatchObject({ unit: null, remaining: 2 });
    for (let i = 0; i < 2; i++) {
      clock.advance((LEASE_S - 10) * 1000);
      expect((await beat(runId, b.id)).body.data.leased_units).toEqual([2]);
      expect(await lease(runId, a.id)).toMatchObject({ unit: null, remaining: 2 });
    }
    const retry = await lease(runId, b.id);
    expect(retry.unit).toMatchObject({ unit: 1, file: 'crashes.spec.ts' });
    expect(await runOf(runId)).toMatchObject({ state: 'queued' });

    // B's unit 2 passes; the retry crashes too: the unit fails, and the run ends error.
    const reporter = client(server.url, b.reporterKey);
    expect((await reporter.post(`/api/test-runs/${runId}/shards/2/begin`, { tests: [] })).status).toBe(200);
    expect((await reporter.post(`/api/test-runs/${runId}/shards/2/end`, { status: 'passed' })).status).toBe(200);
    const again = await crash(runId, b.id, 1, 'Playwright exited (code 1): the web server port is taken again');
    expect(again.body.data).toEqual({ retried: false });
    const run = await runOf(runId);
    expect(run.state).toBe('error');
    const [row] = await server.sql<{ error_reason: string }[]>`select error_reason from test_runs where id = ${runId}`;
    expect(row?.error_reason).toContain(
      'unit 1 (crashes.spec.ts, chromium) crashed on agent agent-a: Playwright exited (code 1): the web server port is taken',
    );
    expect(row?.error_reason).toContain(
      'unit 1 (crashes.spec.ts, chromium) crashed again on agent agent-b: Playwright exited (code 1): the web server port is taken again',
    );
    expect(row?.error_reason).not.toContain('shard 2');
    const page = await fetch(run.summary_url as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('crashed again on agent agent-b: Playwright exited (code 1): the web server port is taken again');
  });

  it('when the run has one agent, then the unit that crashed on it is its own again after the lease time, and a second crash fails the run', async () => {
    const runId = await agentRun('build-alone');
    const a = await join(runId, 'alone');
    await as(a.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.id, units: [unit('only.spec.ts', [testId(701)])] });
    expect((await lease(runId, a.id)).unit).toMatchObject({ unit: 1 });
    expect((await crash(runId, a.id, 1, 'out of memory')).body.data).toEqual({ retried: true });
    // For a lease time, an agent that joins late may take it; then the one agent takes it again.
    expect(await lease(runId, a.id)).toMatchObject({ unit: null, remaining: 1 });
    clock.advance((LEASE_S + 1) * 1000);
    expect((await lease(runId, a.id)).unit).toMatchObject({ unit: 1 });
    expect((await crash(runId, a.id, 1, 'out of memory again')).body.data).toEqual({ retried: false });
    expect(await runOf(runId)).toMatchObject({ state: 'error' });
  });

  it('when an agent joins late, then the unit that crashed on the first goes to it', async () => {
    const runId = await agentRun('build-late');
    const a = await join(runId, 'early');
    await as(a.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.id, units: [unit('only.spec.ts', [testId(801)])] });
    expect((await lease(runId, a.id)).unit).toMatchObject({ unit: 1 });
    expect((await crash(runId, a.id, 1, 'crashed')).body.data).toEqual({ retried: true });
    const late = await join(runId, 'late');
    expect(await lease(runId, a.id)).toMatchObject({ unit: null });
    expect((await lease(runId, late.id)).unit).toMatchObject({ unit: 1 });
  });

  it('when a crash report is malformed or names no unit of the run, then the answer says why', async () => {
    const runId = await agentRun('build-malformed');
    const a = await join(runId, 'a');
    await as(a.id).put(`/api/test-runs/${runId}/units`, { agent_id: a.id, units: [unit('only.spec.ts', [testId(901)])] });
    const empty = await crash(runId, a.id, 1, '');
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body)).toContain('error');
    const unknown = await crash(runId, a.id, 7, 'crashed');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe(`unit 7 of test run ${runId} not found`);
  });
});
