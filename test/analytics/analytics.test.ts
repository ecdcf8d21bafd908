import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { rebuildRollups } from '../../server/src/analytics/rollups.ts';
import { attemptsOf } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// Three days, two environments, recorded through the ingestion API under an injected clock:
//   05-08 A run1: t1 pass, t2 fail, t3 flaky, t4 skip            -> failed
//   05-09 A run2: t1 pass, t2 fail (snoozed), t3 pass, t4 skip   -> passed
//   05-09 B run3: t1 fail, t2 pass                               -> failed
//   05-10 A run4: rerun of run1, t2 pass                         -> passed
//   05-10 B run5: t1 pass, then cancelled                        -> cancelled
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let envA: number;
let envB: number;
const runs: Record<string, number> = {};
const [t1, t2, t3, t4] = [testId(1), testId(2), testId(3), testId(4)];
const LISTED = [
  { id: t1, title: 'shows the title', file_path: 'tests/home.spec.ts', suites: [], runner_project: 'desktop', tags: ['@smoke'], line: 3, column: 1 },
  { id: t2, title: 'pays by card', file_path: 'tests/checkout.spec.ts', suites: [], runner_project: 'desktop', tags: [], line: 5, column: 1 },
  { id: t3, title: 'lists prices', file_path: 'tests/prices.spec.ts', suites: [], runner_project: 'desktop', tags: ['@smoke'], line: 7, column: 1 },
  { id: t4, title: 'saved cards', file_path: 'tests/checkout.spec.ts', suites: [], runner_project: 'desktop', tags: [], line: 9, column: 1 },
];

type Outcome = 'pass' | 'fail' | 'flaky' | 'skip';

const FINAL: Record<Outcome, FinalOutcome> = { pass: 'expected', fail: 'unexpected', flaky: 'flaky', skip: 'skipped' };

async function recordRun(name: string, day: string, environment: string, outcomes: Record<string, Outcome>, options: { end?: boolean } = {}) {
  server.clock.now = new Date(`${day}T12:00:00Z`);
  const runId = (await api.post('/api/test-runs/report', { environment })).body.data.test_run.id as number;
  runs[name] = runId;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: LISTED.filter((t) => t.id in outcomes), complete: false });
  const results = Object.entries(outcomes).flatMap(([test, outcome]) => attemptsOf(test, FINAL[outcome]));
  const recorded = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
  expect(recorded.status).toBe(200);
  if (options.end !== false) {
    const failed = Object.values(outcomes).includes('fail');
    expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failed ? 'failed' : 'passed' })).status).toBe(200);
    await waitForRollups(server.sql);
  }
  return runId;
}

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock(new Date('2026-05-08T12:00:00Z')) });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
  envA = (await api.post('/api/environments', { name: 'A', slug: 'a' })).body.data.environment.id;
  envB = (await api.post('/api/environments', { name: 'B', slug: 'b' })).body.data.environment.id;
  await recordRun('run1', '2026-05-08', 'a', { [t1]: 'pass', [t2]: 'fail', [t3]: 'flaky', [t4]: 'skip' });
  server.clock.now = new Date('2026-05-09T11:00:00Z');
  await api.post('/api/snoozes', { test_ids: [t2], snooze_until: '2026-05-09T13:00:00Z', scoped_to_environment_id: envA });
  await recordRun('run2', '2026-05-09', 'a', { [t1]: 'pass', [t2]: 'fail', [t3]: 'pass', [t4]: 'skip' });
  await recordRun('run3', '2026-05-09', 'b', { [t1]: 'fail', [t2]: 'pass' });
  // A rerun of run1: the trigger links it; here the reporter reports it, so the link is set as the trigger would.
  const run4 = await recordRun('run4', '2026-05-10', 'a', { [t2]: 'pass' }, { end: false });
  await server.sql`update test_runs set rerun_source_id = ${runs.run1 as number} where id = ${run4}`;
  await api.post(`/api/test-runs/${run4}/shards/1/end`, { status: 'passed' });
  const run5 = await recordRun('run5', '2026-05-10', 'b', { [t1]: 'pass' }, { end: false });
  expect((await api.post(`/api/test-runs/${run5}/cancel`, { reason: 'superseded' })).status).toBe(200);
  await waitForRollups(server.sql);
  server.clock.now = new Date('2026-05-10T18:00:00Z');
});
afterAll(async () => server?.close());

const day = (date: string, counts: Partial<Record<string, number>> = {}) => ({
  date,
  run_count: 0,
  passed_runs: 0,
  failed_runs: 0,
  error_runs: 0,
  cancelled_runs: 0,
  rerun_count: 0,
  total_tests: 0,
  passed_tests: 0,
  failed_tests: 0,
  failed_tests_after_snooze: 0,
  flaky_tests: 0,
  ...counts,
});

describe('run analytics', () => {
  it('when the window is 4 days, then every day is there (empty ones with zeros) with the hand-computed counts', async () => {
    const response = await api.get('/api/v1/analytics/test-runs?days=4');
    expect(response.status).toBe(200);
    expect(response.body.data.daily).toEqual([
      day('2026-05-07'),
      day('2026-05-08', { run_count: 1, failed_runs: 1, total_tests: 4, passed_tests: 1, failed_tests: 1, failed_tests_after_snooze: 1, flaky_tests: 1 }),
      day('2026-05-09', { run_count: 2, passed_runs: 1, failed_runs: 1, total_tests: 6, passed_tests: 3, failed_tests: 2, failed_tests_after_snooze: 1 }),
      day('2026-05-10', { run_count: 2, passed_runs: 1, cancelled_runs: 1, rerun_count: 1, total_tests: 2, passed_tests: 2 }),
    ]);
    expect(response.body.data.summary).toEqual({
      total_runs: 5,
      passed_runs: 2,
      failed_runs: 2,
      error_runs: 0,
      pass_rate: 40,
      avg_tests_per_run: 2.4,
      rerun_count: 1,
      rerun_rate: 20,
    });
  });

  it('when filtered by environment, then only its runs count', async () => {
    const summary = (await api.get(`/api/v1/analytics/test-runs?days=3&environment_id=${envA}`)).body.data.summary;
    expect(summary).toEqual({
      total_runs: 3,
      passed_runs: 2,
      failed_runs: 1,
      error_runs: 0,
      pass_rate: 66.67,
      avg_tests_per_run: 3,
      rerun_count: 1,
      rerun_rate: 33.33,
    });
  });

  it('when days is 1, then the window is today alone; start_date and end_date include both ends', async () => {
    expect((await api.get('/api/v1/analytics/test-runs?days=1')).body.data.daily.map((d: { date: string }) => d.date)).toEqual(['2026-05-10']);
    const range = (await api.get('/api/v1/analytics/test-runs?start_date=2026-05-08&end_date=2026-05-09T23:59:59Z')).body.data;
    expect(range.daily.map((d: { date: string }) => d.date)).toEqual(['2026-05-08', '2026-05-09']);
    expect(range.summary.total_runs).toBe(3);
  });
});

describe('test count analytics', () => {
  it('when read, then each day counts distinct tests that ran, skipped ones left out, and the change is computed', async () => {
    const all = (await api.get('/api/v1/analytics/test-counts?days=3')).body.data;
    expect(all.daily).toEqual([
      { date: '2026-05-08', test_count: 3 },
      { date: '2026-05-09', test_count: 3 },
      { date: '2026-05-10', test_count: 2 },
    ]);
    expect(all.summary).toEqual({ latest_count: 2, first_count: 3, change: -1, change_percent: -33.33 });
    const onB = (await api.get(`/api/v1/analytics/test-counts?days=3&environment_id=${envB}`)).body.data;
    expect(onB.daily.map((d: { test_count: number }) => d.test_count)).toEqual([0, 2, 1]);
    expect(onB.summary).toEqual({ latest_count: 1, first_count: 2, change: -1, change_percent: -50 });
  });
});

describe('test case analytics', () => {
  it('when ordered by fail rate, then the metrics are the hand-computed ones, a snoozed failure counting as a failure', async () => {
    const data = (await api.get('/api/v1/analytics/test-cases?days=3&order_by=fail_rate&limit_history=2')).body.data;
    expect(data.test_cases.map((t: { test_case_id: string }) => t.test_case_id)).toEqual([t2, t1, t3, t4]);
    const [second, first, third, fourth] = data.test_cases;
    expect(second.metrics).toEqual({ total_runs: 4, pass_count: 2, fail_count: 2, flaky_count: 0, pass_rate: 50, fail_rate: 50, flaky_rate: 0 });
    expect(first.metrics).toEqual({ total_runs: 4, pass_count: 3, fail_count: 1, flaky_count: 0, pass_rate: 75, fail_rate: 25, flaky_rate: 0 });
    expect(third.metrics).toEqual({ total_runs: 2, pass_count: 1, fail_count: 0, flaky_count: 1, pass_rate: 50, fail_rate: 0, flaky_rate: 50 });
    expect(fourth.metrics).toEqual({ total_runs: 0, pass_count: 0, fail_count: 0, flaky_count: 0, pass_rate: 0, fail_rate: 0, flaky_rate: 0 });
    expect(second).toMatchObject({ test_name: 'pays by card', file_path: 'tests/checkout.spec.ts', project_name: 'desktop', tags: [] });
    expect(second.history).toEqual([
      {
        timestamp: expect.any(String),
        status: 'pass',
        test_run_id: String(runs.run4),
        environment_id: String(envA),
        executed_at: expect.any(String),
        duration_total: 100,
        retries: 0,
      },
      {
        timestamp: expect.any(String),
        status: 'pass',
        test_run_id: String(runs.run3),
        environment_id: String(envB),
        executed_at: expect.any(String),
        duration_total: 100,
        retries: 0,
      },
    ]);
    expect(fourth.history.map((h: { status: string }) => h.status)).toEqual(['skip', 'skip']);
    expect(data.summary).toEqual({ total_test_cases: 4, test_cases_with_history: 4 });
  });

  it('when one test case is asked for, then the other filters are ignored and its whole history comes, failures with their retries', async () => {
    const data = (await api.get(`/api/v1/analytics/test-cases?days=3&test_case_id=${t2}&tags=smoke&search=zzz&limit=1`)).body.data;
    expect(data.test_cases).toHaveLength(1);
    expect(data.test_cases[0].history.map((h: { status: string; retries: number; test_run_id: string }) => [h.status, h.retries, h.test_run_id])).toEqual([
      ['pass', 0, String(runs.run4)],
      ['pass', 0, String(runs.run3)],
      ['fail', 1, String(runs.run2)],
      ['fail', 1, String(runs.run1)],
    ]);
    expect(data.test_cases[0].history[3].duration_total).toBe(200);
  });

  it('when filtered by tags, search or environment, then only those tests and executions count', async () => {
    const ids = async (query: string) =>
      (await api.get(`/api/v1/analytics/test-cases?days=3${query}`)).body.data.test_cases.map((t: { test_case_id: string }) => t.test_case_id).sort();
    expect(await ids('&tags=smoke')).toEqual([t1, t3].sort());
    expect(await ids('&search=CHECKOUT')).toEqual([t2, t4].sort());
    const onB = (await api.get(`/api/v1/analytics/test-cases?days=3&environment_id=${envB}&order_by=fail_rate`)).body.data.test_cases;
    expect(onB.map((t: { test_case_id: string; metrics: { total_runs: number } }) => [t.test_case_id, t.metrics.total_runs])).toEqual([
      [t1, 2],
      [t2, 1],
    ]);
  });

  it('when the page is shorter than the tests that ran, then the summary still counts every test that ran', async () => {
    const lastRun = (await api.get('/api/v1/analytics/test-cases?days=3&order_by=last_run&order=desc&limit=2')).body.data;
    expect(lastRun.test_cases).toHaveLength(2);
    expect(lastRun.summary).toEqual({ total_test_cases: 4, test_cases_with_history: 4 });
    const onB = (await api.get(`/api/v1/analytics/test-cases?days=3&environment_id=${envB}&limit=1`)).body.data;
    expect(onB.summary.test_cases_with_history).toBe(2);
  });
});

describe('analytics validation', () => {
  it.each([
    ['/api/v1/analytics/test-runs?days=0', 'query.days'],
    ['/api/v1/analytics/test-runs?days=91', 'query.days'],
    ['/api/v1/analytics/test-counts?start_date=2026-05-01', 'query.end_date'],
    ['/api/v1/analytics/test-counts?end_date=2026-05-01', 'query.start_date'],
    ['/api/v1/analytics/test-runs?start_date=2026-05-09&end_date=2026-05-01', 'query.end_date'],
    ['/api/v1/analytics/test-cases?limit=501', 'query.limit'],
    ['/api/v1/analytics/test-cases?limit=0', 'query.limit'],
    ['/api/v1/analytics/test-cases?limit_history=101', 'query.limit_history'],
    ['/api/v1/analytics/test-cases?order_by=name', 'query.order_by'],
    ['/api/v1/analytics/test-cases?order=up', 'query.order'],
    ['/api/v1/analytics/test-runs?environment_id=999999', 'query.environment_id'],
  ])('when %s, then the analytics error shape names %s', async (path, field) => {
    const response = await api.get(path);
    expect([400, 404]).toContain(response.status);
    expect(response.body).toEqual({ error: expect.stringContaining(field) });
  });

  it('when the limits are at their edges, then they are accepted', async () => {
    for (const path of ['test-runs?days=1', 'test-runs?days=90', 'test-cases?limit=1&limit_history=1', 'test-cases?limit=500&limit_history=100']) {
      expect((await api.get(`/api/v1/analytics/${path}`)).status).toBe(200);
    }
  });
});

describe('a run reported late', () => {
  it('when a run of an earlier day arrives after later days, then every window that holds its day counts it, and no other', async () => {
    const before = (await api.get(`/api/v1/analytics/test-cases?days=3&test_case_id=${t3}`)).body.data.test_cases[0].metrics;
    await recordRun('late', '2026-05-08', 'a', { [t3]: 'fail' });
    server.clock.now = new Date('2026-05-10T18:00:00Z');
    const after = (await api.get(`/api/v1/analytics/test-cases?days=3&test_case_id=${t3}`)).body.data.test_cases[0].metrics;
    expect(after).toEqual({
      ...before,
      total_runs: before.total_runs + 1,
      fail_count: before.fail_count + 1,
      pass_rate: 33.33,
      fail_rate: 33.33,
      flaky_rate: 33.33,
    });
    const lastDayOnly = (await api.get(`/api/v1/analytics/test-cases?start_date=2026-05-09&end_date=2026-05-10&test_case_id=${t3}`)).body.data.test_cases[0]
      .metrics;
    expect(lastDayOnly).toMatchObject({ total_runs: 1, pass_count: 1, fail_count: 0 });
    const firstDayOnly = (await api.get(`/api/v1/analytics/test-cases?start_date=2026-05-08&end_date=2026-05-08&test_case_id=${t3}`)).body.data.test_cases[0]
      .metrics;
    expect(firstDayOnly).toMatchObject({ total_runs: 2, flaky_count: 1, fail_count: 1 });
    const runsThatDay = (await api.get('/api/v1/analytics/test-runs?start_date=2026-05-08&end_date=2026-05-08')).body.data.daily[0];
    expect(runsThatDay).toMatchObject({ run_count: 2, failed_runs: 2 });
  });
});

describe('rebuilding the rollups', () => {
  const rollupTables = ['daily_run_stats', 'daily_test_counts', 'test_case_cumulative'];
  const snapshot = async () => {
    const tables: Record<string, readonly unknown[]> = {};
    for (const table of rollupTables) {
      tables[table] = await server.sql`select * from ${server.sql(table)} where project_id = ${projectId} order by 1, 2, 3, 4`;
    }
    return tables;
  };

  it('when the rollups are rebuilt from the raw results, then they equal the ones written run by run, row for row', async () => {
    const incremental = await snapshot();
    expect(incremental.test_case_cumulative?.length).toBeGreaterThan(0);
    await rebuildRollups(server.sql, projectId);
    expect(await snapshot()).toEqual(incremental);
  });
});
