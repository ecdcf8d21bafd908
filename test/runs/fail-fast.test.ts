import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedProjectWithEnvironment, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { createSnooze } from '../../server/src/snoozes/store.ts';

// Fail fast (issue 56, point 2): a run stops once `max_failures` of its tests failed that no
// snooze covers; the limit is the reporter's or trigger's, else the environment's when the run was
// made. The run is cancelled with a reason that names the failures, and takes nothing more.

let server: TestServer;
let api: ReturnType<typeof client>;
let environmentId: number;
let projectId: number;
let keyNumber = 0;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProjectWithEnvironment(server.sql, 'ci');
  environmentId = project.environmentId;
  projectId = project.projectId;
  api = client(server.url, project.key);
});
afterAll(async () => server?.close());

async function reportRun(body: Record<string, unknown> = {}): Promise<number> {
  const answer = await api.post('/api/test-runs/report', { environment: 'ci', run_key: `fail-fast-${++keyNumber}`, ...body });
  expect(answer.status).toBe(200);
  const runId = answer.body.data.test_run.id as number;
  const tests = Array.from({ length: 6 }, (_, i) => listedTest(testId(keyNumber * 100 + i), { title: `checkout step ${i}` }));
  expect((await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests })).status).toBe(200);
  return runId;
}

const failing = (n: number) => attemptsOf(testId(keyNumber * 100 + n), 'unexpected');
const passing = (n: number) => [attempt(testId(keyNumber * 100 + n))];

async function runOf(runId: number) {
  return (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
}

async function setEnvironmentLimit(maxFailures: number | null): Promise<void> {
  const answer = await api.patch(`/api/environments/${environmentId}`, { max_failures: maxFailures });
  expect(answer.status).toBe(200);
  expect(answer.body.data.environment.max_failures).toBe(maxFailures);
}

describe('fail fast', () => {
  it('when a run with max_failures 2 records its second failure, then it is cancelled naming both, and a later batch is refused', async () => {
    const runId = await reportRun({ max_failures: 2 });
    expect((await runOf(runId)).max_failures).toBe(2);
    expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [...passing(0), ...failing(1)] })).status).toBe(200);
    expect((await runOf(runId)).state).toBe('running');
    expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: failing(2) })).status).toBe(200);
    const run = await runOf(runId);
    expect(run.state).toBe('cancelled');
    expect(run.cancel_reason).toMatch(/^stopped after 2 failed tests \(max_failures 2\): /);
    expect(run.cancel_reason).toContain('checkout step 1');
    expect(run.cancel_reason).toContain('checkout step 2');
    const late = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: passing(3) });
    expect(late.status).toBe(409);
  });

  it('when a failure is snoozed, then it does not count toward the limit', async () => {
    const runId = await reportRun({ max_failures: 1 });
    const snooze = await api.post('/api/snoozes', {
      test_ids: [testId(keyNumber * 100 + 1)],
      snooze_until: new Date(server.clock.now.getTime() + 3_600_000).toISOString(),
    });
    expect(snooze.status).toBe(200);
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: failing(1) });
    expect((await runOf(runId)).state).toBe('running');
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: failing(2) });
    const run = await runOf(runId);
    expect(run.state).toBe('cancelled');
    expect(run.cancel_reason).toContain('checkout step 2');
    expect(run.cancel_reason).not.toContain('checkout step 1');
  });

  it('when a batch reaches the limit, then its answer says the run is cancelled by max_failures, a later batch is refused with code run_ended, and the run names who stopped it', async () => {
    const runId = await reportRun({ max_failures: 1 });
    const first = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: passing(0) });
    expect(first.body.data.test_run).toEqual({ state: 'running', cancelled_by: null });
    const stopping = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: failing(1) });
    expect(stopping.status).toBe(200);
    expect(stopping.body.data.test_run).toEqual({ state: 'cancelled', cancelled_by: 'max_failures' });
    const late = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: passing(2) });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'run_ended', run_state: 'cancelled' });
    const run = await runOf(runId);
    expect(run).toMatchObject({ state: 'cancelled', cancelled_by: 'max_failures' });
    expect(run.cancel_reason).toContain('checkout step 1');
  });

  it('when a failure is quarantined by the policy, then it does not count toward the limit either', async () => {
    const runId = await reportRun({ max_failures: 1 });
    await createSnooze(
      server.sql,
      projectId,
      {
        testIds: [testId(keyNumber * 100 + 1)],
        snoozeUntil: new Date(server.clock.now.getTime() + 3_600_000),
        description: 'quarantined: flaky',
        createdBy: null,
        environmentId: null,
        createdFromRunId: null,
        source: 'auto',
      },
      server.clock.now,
    );
    const quarantined = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: failing(1) });
    expect(quarantined.body.data.test_run.state).toBe('running');
    const counted = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: failing(2) });
    expect(counted.body.data.test_run.state).toBe('cancelled');
    const run = await runOf(runId);
    expect(run.cancel_reason).toMatch(/^stopped after 1 failed test \(max_failures 1\): /);
    expect(run.cancel_reason).toContain('checkout step 2');
    expect(run.cancel_reason).not.toContain('checkout step 1');
  });

  it("when the environment has a limit, then a run made without one takes it, and keeps it when the environment's changes", async () => {
    await setEnvironmentLimit(3);
    try {
      const runId = await reportRun();
      expect((await runOf(runId)).max_failures).toBe(3);
      await setEnvironmentLimit(null);
      expect((await runOf(runId)).max_failures).toBe(3);
      const unlimited = await reportRun();
      expect((await runOf(unlimited)).max_failures).toBeNull();
      await api.post(`/api/test-runs/${unlimited}/results`, { shard: 1, results: [...failing(0), ...failing(1), ...failing(2), ...failing(3)] });
      expect((await runOf(unlimited)).state).toBe('running');
    } finally {
      await setEnvironmentLimit(null);
    }
  });

  it('when a run without a limit has taken batches with failures, then it keeps running, and a run with one beside it still stops at its limit', async () => {
    // The server remembers the runs it found without a limit (a run's limit never changes): the
    // memory is of those runs alone.
    const unlimited = await reportRun();
    for (const n of [0, 1, 2]) expect((await api.post(`/api/test-runs/${unlimited}/results`, { shard: 1, results: failing(n) })).status).toBe(200);
    expect((await runOf(unlimited)).state).toBe('running');
    const limited = await reportRun({ max_failures: 1 });
    expect((await api.post(`/api/test-runs/${limited}/results`, { shard: 1, results: failing(0) })).status).toBe(200);
    expect((await runOf(limited)).state).toBe('cancelled');
    expect((await runOf(unlimited)).state).toBe('running');
  });
  it('when a limit is not a whole number of at least 1, then the report and the environment refuse it naming the field', async () => {
    const report = await api.post('/api/test-runs/report', { environment: 'ci', max_failures: 0 });
    expect(report.status).toBe(400);
    expect(JSON.stringify(report.body)).toContain('max_failures');
    const environment = await api.patch(`/api/environments/${environmentId}`, { max_failures: 1.5 });
    expect(environment.status).toBe(400);
    expect(JSON.stringify(environment.body)).toContain('max_failures');
  });
});
