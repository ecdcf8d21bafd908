import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuedRollups, rollUpNext } from '../../server/src/analytics/index.ts';
import { rebuildRollups } from '../../server/src/analytics/rollups.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

const now = () => new Date();

// A run's rollup is written by a job right after its end. This server runs no such job: the tests
// write rollups themselves, as the job would, to see the queue between.
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
beforeAll(async () => {
  server = await startTestServer({ writeRollups: false });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
  await api.post('/api/environments', { name: 'CI', slug: 'ci' });
});
afterAll(async () => server?.close());

async function endedRun(tests: number): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'ci' })).body.data.test_run.id as number;
  const ids = Array.from({ length: tests }, (_, i) => testId(i + 1));
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)), complete: false });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.flatMap((id) => attemptsOf(id, 'expected')) });
  const ended = await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
  expect(ended.body.data.state).toBe('passed');
  return runId;
}

async function runsCounted(): Promise<number> {
  const [row] = await server.sql<{ n: number }[]>`
    select coalesce(sum(run_count), 0)::int as n from daily_run_stats where project_id = ${projectId} and environment_id = 0`;
  return row?.n ?? 0;
}

async function drain(): Promise<void> {
  while (await rollUpNext(server.sql, now));
}

describe('the rollup queue', () => {
  it('when a run ends, then its rollup waits in the queue until a job writes it, once', async () => {
    await drain();
    const before = await runsCounted();
    await endedRun(3);
    expect(await queuedRollups(server.sql)).toBe(1);
    expect(await runsCounted()).toBe(before);
    expect(await rollUpNext(server.sql, now)).toBe(true);
    expect(await rollUpNext(server.sql, now)).toBe(false);
    expect(await queuedRollups(server.sql)).toBe(0);
    expect(await runsCounted()).toBe(before + 1);
  });

  it('when two jobs roll up at once, then each waiting run is written once', async () => {
    await drain();
    const before = await runsCounted();
    await Promise.all([endedRun(2), endedRun(2), endedRun(2)]);
    const taken = await Promise.all([rollUpNext(server.sql, now), rollUpNext(server.sql, now), rollUpNext(server.sql, now), rollUpNext(server.sql, now)]);
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await runsCounted()).toBe(before + 3);
  });

  it('when the rollups are rebuilt while a run waits in the queue, then the rebuild counts it and the queue no longer holds it', async () => {
    await drain();
    const before = await runsCounted();
    await endedRun(2);
    await rebuildRollups(server.sql, projectId);
    expect(await queuedRollups(server.sql)).toBe(0);
    expect(await rollUpNext(server.sql, now)).toBe(false);
    expect(await runsCounted()).toBe(before + 1);
  });
});
