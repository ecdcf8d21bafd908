import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildRollups } from '../../server/src/analytics/rollups.ts';
import { DAY_MS } from '../../server/src/context.ts';
import { client } from '../helpers/http.ts';
import { reportRun, storageAgreement, type ReportedTest } from '../helpers/retention.ts';
import { waitForRollups, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

const T0 = new Date('2026-06-10T12:00:00.000Z');
const daysAgo = (days: number) => new Date(T0.getTime() - days * DAY_MS);

/** Three tests: one passes, one fails with a screenshot of its own and a file every run shares, one is flaky. */
function suite(run: string): ReportedTest[] {
  return [
    { id: testId(1), outcome: 'expected' },
    {
      id: testId(2),
      outcome: 'unexpected',
      attachments: [
        { name: 'screenshot', bytes: Buffer.from(`the screen of run ${run}`) },
        { name: 'shared.txt', bytes: Buffer.from('the same bytes in every run') },
      ],
    },
    { id: testId(3), outcome: 'flaky' },
  ];
}

/** The analytics answers that the rollups give, history aside (it reads the results that are left). */
async function analyticsAnswers(api: ReturnType<typeof client>) {
  const testCases = (await api.get('/api/v1/analytics/test-cases?days=14&order_by=fail_rate')).body.data;
  return {
    runs: (await api.get('/api/v1/analytics/test-runs?days=14')).body.data,
    counts: (await api.get('/api/v1/analytics/test-counts?days=14')).body.data,
    testCases: { ...testCases, test_cases: testCases.test_cases.map(({ history: _history, ...rest }: { history: unknown }) => rest) },
    flaky: (await api.get('/api/flaky-tests?per_page=50')).body.data,
  };
}

describe('the retention policy', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const clock = new TestClock(T0);
  let projectId: number;
  const runs: Record<'old' | 'pinned' | 'middle' | 'recent', number> = { old: 0, pinned: 0, middle: 0, recent: 0 };

  beforeAll(async () => {
    server = await startTestServer({
      clock,
      retention: true,
      // Nothing expires until a test sets the project's policy; the job looks every 300 ms.
      env: { PROCTOR_RETENTION_RESULTS_DAYS: '365', PROCTOR_RETENTION_ARTIFACTS_DAYS: '200', PROCTOR_RETENTION_INTERVAL_MIN: '0.005' },
    });
    const seeded = await seedProject(server.sql);
    projectId = seeded.projectId;
    const key = seeded.key;
    await seedEnvironment(server.sql, projectId, 'staging');
    api = client(server.url, key);
    for (const [name, age] of [
      ['old', 10],
      ['pinned', 10],
      ['middle', 5],
      ['recent', 1],
    ] as const) {
      clock.now = daysAgo(age);
      runs[name] = await reportRun(api, server.url, 'staging', suite(name));
    }
    clock.now = T0;
    await waitForRollups(server.sql);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it("when a project has no policy, then the server's defaults answer; a policy keeping attachments longer than results is refused, naming the field", async () => {
    expect((await api.get('/api/retention-policy')).body.data.policy).toEqual({ results_days: 365, artifacts_days: 200 });
    const tooLong = await api.put('/api/retention-policy', { artifacts_days: 400 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain('body.artifacts_days');
    const shorter = await api.put('/api/retention-policy', { results_days: 100 });
    expect(shorter.status).toBe(400);
    expect(shorter.body.error.message).toContain('body.results_days');
    for (const bad of [{ results_days: 0 }, { artifacts_days: 1.5 }, { results_days: '9' }, { keep: 3 }]) {
      const refused = await api.put('/api/retention-policy', bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.error.message).toMatch(/body\.(results_days|artifacts_days)|"keep"/);
    }
    expect((await api.get('/api/retention-policy')).body.data.policy).toEqual({ results_days: 365, artifacts_days: 200 });
    expect((await api.post('/api/test-runs/999999/pin')).status).toBe(404);
  });

  it('when runs are older than the policy, then the job deletes their results and files, and pinned runs and the rollups stay', async () => {
    const pinned = await api.post(`/api/test-runs/${runs.pinned}/pin`);
    expect(pinned.body.data.test_run).toMatchObject({ id: runs.pinned, pinned: true, details_deleted: false });
    const before = await analyticsAnswers(api);
    const oldRun = (await api.get(`/api/test-runs/${runs.old}`)).body.data.test_run.testRun;
    const filesBefore = (await storageAgreement(server.sql, server.filesDir)).missingFiles;
    expect(filesBefore).toEqual([]);

    const policy = await api.put('/api/retention-policy', { results_days: 7, artifacts_days: 3 });
    expect(policy.body.data.policy).toEqual({ results_days: 7, artifacts_days: 3 });
    await waitUntil(async () => (await api.get(`/api/test-runs/${runs.old}`)).body.data.test_run.testRun.details_deleted, 15_000, 'the old run deleted');
    await waitUntil(
      async () => (await api.get(`/api/test-runs/${runs.middle}`)).body.data.test_run.flattenedSummaryDetails[0].attachments.length === 0,
      15_000,
      'attachments deleted',
    );
    await waitUntil(async () => (await storageAgreement(server.sql, server.filesDir)).queued === 0, 15_000, 'bytes removed');

    const old = (await api.get(`/api/test-runs/${runs.old}`)).body.data.test_run;
    expect(old.flattenedSummaryDetails).toEqual([]);
    expect(old.testRun).toEqual({ ...oldRun, details_deleted: true, summary_url: old.testRun.summary_url });
    const listed = (await api.get('/api/test-runs?per_page=10')).body.data.test_runs;
    expect(
      listed.map((run: { id: number; details_deleted: boolean; pinned: boolean; total_count: number }) => [
        run.id,
        run.details_deleted,
        run.pinned,
        run.total_count,
      ]),
    ).toEqual([
      [runs.recent, false, false, 3],
      [runs.middle, false, false, 3],
      [runs.pinned, false, true, 3],
      [runs.old, true, false, 3],
    ]);

    const page = await (await fetch(old.testRun.summary_url.replace(/^https?:\/\/[^/]+/, server.url))).text();
    expect(page).toContain("The retention policy deleted this run's results and attachments on 2026-06-10");
    expect(page).toContain('<b>3</b>Total');

    const keptDetails = (await api.get(`/api/test-runs/${runs.pinned}`)).body.data.test_run.flattenedSummaryDetails;
    expect(keptDetails).toHaveLength(3);
    expect(keptDetails[0].attachments.map((a: { name: string }) => a.name).sort()).toEqual(['screenshot', 'shared.txt']);
    // Every attachment the pinned run still shows downloads; the middle run kept its results only.
    for (const attachment of keptDetails[0].attachments) expect((await fetch(attachment.url)).status).toBe(200);
    const middle = (await api.get(`/api/test-runs/${runs.middle}`)).body.data.test_run.flattenedSummaryDetails;
    expect(middle.map((d: { status: string; attachments: unknown[] }) => [d.status, d.attachments.length])).toEqual([
      ['failed', 0],
      ['flaky', 0],
      ['passed', 0],
    ]);

    const [rows] = await server.sql<{ results: number; tests: number; attachments: number; blobs: number }[]>`
      select (select count(*)::int from test_results where test_run_id = ${runs.old}) as results,
             (select count(*)::int from test_run_tests where test_run_id = ${runs.old}) as tests,
             (select count(*)::int from test_attachments where test_run_id in (${runs.old}, ${runs.middle})) as attachments,
             (select count(*)::int from artifact_blobs) as blobs`;
    // The pinned run's screenshot, the recent run's, and the shared file both hold.
    expect(rows).toEqual({ results: 0, tests: 0, attachments: 0, blobs: 3 });
    expect(await storageAgreement(server.sql, server.filesDir)).toEqual({ orphanFiles: [], missingFiles: [], queued: 0 });

    expect(await analyticsAnswers(api)).toEqual(before);
    const history = (await api.get(`/api/v1/analytics/test-cases?days=14&test_case_id=${testId(2)}&limit_history=10`)).body.data.test_cases[0];
    expect(history.metrics.total_runs).toBe(4);
    expect(history.history.map((entry: { test_run_id: string }) => Number(entry.test_run_id)).sort()).toEqual([runs.pinned, runs.middle, runs.recent].sort());
  });

  it('when a pinned run is unpinned, then the next pass deletes it', async () => {
    const unpinned = await api.delete(`/api/test-runs/${runs.pinned}/pin`);
    expect(unpinned.body.data.test_run).toMatchObject({ pinned: false, details_deleted: false });
    await waitUntil(
      async () => (await api.get(`/api/test-runs/${runs.pinned}`)).body.data.test_run.testRun.details_deleted,
      15_000,
      'the unpinned run deleted',
    );
    await waitUntil(async () => (await storageAgreement(server.sql, server.filesDir)).queued === 0, 15_000, 'bytes removed');
    expect(await storageAgreement(server.sql, server.filesDir)).toEqual({ orphanFiles: [], missingFiles: [], queued: 0 });
    const [blobs] = await server.sql<{ n: number }[]>`select count(*)::int as n from artifact_blobs`;
    expect(blobs?.n).toBe(2);
  });

  it('when the rollups are rebuilt after runs lost their results, then the days of those runs keep their rows and the analytics answer the same', async () => {
    const rollups = () => server.sql`
      select 'runs' as t, environment_id, day::text, run_count::text as a, total_tests::text as b, '' as c from daily_run_stats where project_id = ${projectId}
      union all select 'counts', environment_id, day::text, test_count::text, '', '' from daily_test_counts where project_id = ${projectId}
      union all select 'cumulative', environment_id, day::text, test_case_id, total_runs || '/' || fail_count || '/' || flaky_count, duration_sum::text
        from test_case_cumulative where project_id = ${projectId}
      union all select 'flakiness', environment_id, day::text, test_case_id, counted_runs || '/' || flaky_runs, failed_runs::text
        from daily_test_flakiness where project_id = ${projectId}
      order by 1, 2, 3, 4`;
    const before = { rows: await rollups(), answers: await analyticsAnswers(api) };
    expect(before.rows.filter((row) => row.t === 'cumulative').length).toBeGreaterThan(0);
    await rebuildRollups(server.sql, projectId);
    expect({ rows: await rollups(), answers: await analyticsAnswers(api) }).toEqual(before);
  });

  it('when a run lost its results, then rerunning its failed tests is refused with the reason', async () => {
    const rerun = await api.put('/api/test-runs', { environment: 'staging', rerun_source_id: runs.old, rerun_only_failed: true });
    expect(rerun.status).toBe(409);
    expect(rerun.body.error.message).toContain('retention policy deleted the results');
  });
});
