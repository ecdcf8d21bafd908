import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginShard, endShard, recordResults } from '../server/src/runs/ingest.ts';
import { finishSilentRuns } from '../server/src/runs/sweeper.ts';
import { client } from './helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from './helpers/server.ts';

let server: TestServer;
let projectId: number;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
  await seedEnvironment(server.sql, projectId, 'ci');
});
afterAll(async () => server?.close());

async function newRun(totalShards: number): Promise<number> {
  const response = await api.post('/api/test-runs/report', { environment: 'ci', total_shards: totalShards });
  expect(response.status).toBe(200);
  return response.body.data.test_run.id;
}

const listed = (n: number) => ({ id: testId(n), title: `t${n}`, file_path: 'a.spec.ts', suites: [], runner_project: 'p', tags: [], line: n, column: 1 });
const passed = (n: number) => ({
  test_id: testId(n), retry: 0, status: 'passed' as const, duration: 10, error_message: null, error_location: null, stdout_tail: null, stderr_tail: null, started_at: null,
  final: { outcome: 'expected' as const, total_duration: 10, error_message: null, failure_group_id: null },
});

describe('silent shards', () => {
  it('when a shard never ends, then the run is finished as error after the timeout, naming the shard', async () => {
    const runId = await newRun(2);
    const now = () => server.clock.now;
    await server.sql.begin((tx) => beginShard(tx, projectId, runId, 1, { tests: [listed(1)], commit: null, complete: true }, now()));
    await server.sql.begin((tx) => beginShard(tx, projectId, runId, 2, { tests: [listed(2)], commit: null, complete: true }, now()));
    await server.sql.begin((tx) => recordResults(tx, projectId, runId, 1, [passed(1)], now()));
    await server.sql.begin((tx) => endShard(tx, projectId, runId, 1, { status: 'passed', errors: [] }, now()));
    expect(await finishSilentRuns(server.sql, now(), 60_000)).toEqual([]);
    server.clock.advance(60_001);
    expect(await finishSilentRuns(server.sql, now(), 60_000)).toEqual([runId]);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'error', success_count: 1, total_count: 1 });
    expect(run.error_reason).toContain('shard 2 never ended');
  });

  it('when results arrive for a finished run, then they are refused with 409 so the reporter stops', async () => {
    const runId = await newRun(1);
    await server.sql.begin((tx) => endShard(tx, projectId, runId, 1, { status: 'passed', errors: [] }, server.clock.now));
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
    expect(first.body.data).toEqual({ received: 2, recorded: 2 });
    expect(again.body.data).toEqual({ received: 2, recorded: 0 });
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ total_count: 2, success_count: 2, state: 'running' });
  });
});
