import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { rebuildRollups } from '../../server/src/analytics/rollups.ts';
import { runsNeeded, summedWindow } from '../../server/src/flaky/store.ts';
import { WINDOW_DAYS, windowStart } from '../../server/src/flaky/window.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// Histories are built through the reporter's wire format (begin, results, end), one run an hour
// on a clock the test moves; the rollup job scores each run as it ends.
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
const clock = new TestClock(new Date('2026-11-01T08:00:00Z'));

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
});
afterAll(async () => server?.close());

type Outcomes = Record<string, FinalOutcome>;

/** A run of `environment` on `commit` with each test's final outcome, reported as the reporter does, rolled up. */
async function reportRun(environment: string, commit: string, outcomes: Outcomes): Promise<number> {
  clock.advance(60 * 60 * 1000);
  const runId = (await api.post('/api/test-runs/report', { environment, commit })).body.data.test_run.id as number;
  const ids = Object.keys(outcomes);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id, { title: `title ${id.slice(17, 20)}` })), complete: true });
  const results = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.flatMap((id) => attemptsOf(id, outcomes[id] as FinalOutcome)) });
  expect(results.status).toBe(200);
  const failed = Object.values(outcomes).includes('unexpected');
  expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failed ? 'failed' : 'passed' })).status).toBe(200);
  await waitForRollups(server.sql);
  return runId;
}

async function environmentId(slug: string): Promise<number> {
  const response = await api.post('/api/environments', { name: slug, slug });
  return response.body.data.environment.id as number;
}

const flakyTests = async (query: string) => (await api.get(`/api/flaky-tests?${query}`)).body;

describe('flakiness scores', () => {
  const [healthy, flaky, broken, flipper, repeatedFailure, newcomer] = [1, 2, 3, 4, 5, 6].map((n) => testId(n)) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  let ci: number;
  const flakyRuns: number[] = [];

  beforeAll(async () => {
    ci = await environmentId('ci');
    // Twelve runs, two per commit (c1: runs 1-2, c2: 3-4, ...).
    for (let run = 1; run <= 12; run++) {
      const commit = `c${Math.ceil(run / 2)}`;
      const outcomes: Outcomes = {
        [healthy]: 'expected',
        // Passed on a retry in runs 1, 5 and 9.
        [flaky]: run % 4 === 1 ? 'flaky' : 'expected',
        [broken]: 'unexpected',
        // Failed where the run before on the same commit passed: runs 2 and 6.
        [flipper]: run === 2 || run === 6 ? 'unexpected' : 'expected',
        // Failed on both runs of c2: no flip, the commit was broken.
        [repeatedFailure]: run === 3 || run === 4 ? 'unexpected' : 'expected',
        ...(run > 7 ? { [newcomer]: 'expected' as const } : {}),
      };
      const runId = await reportRun('ci', commit, outcomes);
      if (outcomes[flaky] === 'flaky') flakyRuns.push(runId);
    }
    // The environment was down: 5 of 6 tests failed. It counts for none of them.
    await reportRun('ci', 'c7', {
      [healthy]: 'unexpected',
      [flaky]: 'unexpected',
      [broken]: 'unexpected',
      [flipper]: 'unexpected',
      [repeatedFailure]: 'unexpected',
      [newcomer]: 'expected',
    });
  });

  it('when tests have a history, then each score and class is the one computed by hand', async () => {
    const body = await flakyTests(`environment_id=${ci}`);
    const byId = new Map(body.data.tests.map((t: { test_case_id: string }) => [t.test_case_id, t]));
    expect(byId.get(flaky)).toMatchObject({
      score: 0.25,
      class: 'flaky',
      runs_counted: 12,
      last_flaky_run_id: flakyRuns.at(-1),
      environment_id: ci,
      quarantined: false,
    });
    expect(byId.get(flaky)).toMatchObject({ title: `title ${flaky.slice(17, 20)}`, file_path: 'a.spec.ts', runner_project: 'p' });
    expect(byId.get(flipper)).toMatchObject({ score: 2 / 12, class: 'flaky', runs_counted: 12 });
    expect(byId.get(broken)).toMatchObject({ score: 0, class: 'broken', runs_counted: 12, last_flaky_run_id: null });
    expect(byId.get(repeatedFailure)).toMatchObject({ score: 0, class: 'healthy', runs_counted: 12 });
    expect(byId.get(healthy)).toMatchObject({ score: 0, class: 'healthy', runs_counted: 12 });
    // Five runs and the one that does not count: under the minimum of ten.
    expect(byId.get(newcomer)).toMatchObject({ class: 'unknown', runs_counted: 5, runs_needed: 5 });
    expect(byId.get(broken)).toMatchObject({ failed_runs: 12, flaky_runs: 0, runs_needed: 0 });
    expect(body.data.tests.map((t: { test_case_id: string }) => t.test_case_id).slice(0, 2)).toEqual([flaky, flipper]);
    expect(body.pagination).toEqual({ page: 1, per_page: 20, total: 6, total_pages: 1 });
  });

  it('when a class is asked for, then only its tests are listed, and pages split them', async () => {
    const flakyOnly = await flakyTests(`environment_id=${ci}&class=flaky`);
    expect(flakyOnly.data.tests.map((t: { test_case_id: string }) => t.test_case_id)).toEqual([flaky, flipper]);
    const page2 = await flakyTests(`environment_id=${ci}&per_page=4&page=2`);
    expect(page2.data.tests).toHaveLength(2);
    expect(page2.pagination).toEqual({ page: 2, per_page: 4, total: 6, total_pages: 2 });
  });

  it('when the runs fall out of the window, then they count no more', async () => {
    const lastTwoDays = await flakyTests(`environment_id=${ci}&days=1`);
    expect(lastTwoDays.data.tests.find((t: { test_case_id: string }) => t.test_case_id === flaky).runs_counted).toBe(12);
    clock.advance(3 * 24 * 60 * 60 * 1000);
    expect((await flakyTests(`environment_id=${ci}&days=1`)).data.tests).toEqual([]);
    expect((await flakyTests(`environment_id=${ci}`)).data.tests).toHaveLength(6);
  });

  it('when the rollups are rebuilt from the results, then the flakiness is the same as run by run, and the window kept equals the one summed', async () => {
    const rows = () => server.sql`
      select environment_id, day::text, test_case_id, counted_runs, flaky_runs, failed_runs, last_flaky_run_id
      from daily_test_flakiness where project_id = ${projectId} order by 1, 2, 3`;
    const runByRun = await rows();
    const keptRunByRun = (await flakyTests('per_page=100')).data.tests;
    expect(runByRun.length).toBeGreaterThan(0);
    const filter = { now: clock.now, limit: 100, offset: 0 };
    const summed = await summedWindow(server.sql, projectId, windowStart(clock.now, WINDOW_DAYS), filter);
    expect(keptRunByRun).toEqual(summed.rows.map((row) => ({ ...row, runs_needed: runsNeeded(row) })));
    await rebuildRollups(server.sql, projectId);
    expect(await rows()).toEqual(runByRun);
    expect((await flakyTests('per_page=100')).data.tests).toEqual(keptRunByRun);
  });

  it('when a query is malformed, then the answer is a 400 naming the field', async () => {
    for (const [query, field] of [
      ['class=sometimes', 'query.class'],
      ['days=0', 'query.days'],
      ['days=91', 'query.days'],
      ['environment_id=x', 'query.environment_id'],
      ['per_page=101', 'query.per_page'],
      ['colour=red', 'colour'],
    ]) {
      const response = await api.get(`/api/flaky-tests?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.message, query).toContain(field);
    }
    expect((await api.get('/api/flaky-tests?environment_id=999999')).status).toBe(404);
  });
});

describe('the quarantine policy', () => {
  const tests = Array.from({ length: 10 }, (_, i) => testId(100 + i));
  const [worst, second, third, alwaysFails] = tests as [string, string, string, string];
  let nightly: number;

  /** Ten tests: `worst` flaky in every other run, `second` in every third, `third` in every fourth, one always failing. */
  const history = (run: number): Outcomes =>
    Object.fromEntries(
      tests.map((id) => {
        if (id === worst) return [id, run % 2 === 0 ? 'flaky' : 'expected'];
        if (id === second) return [id, run % 3 === 0 ? 'flaky' : 'expected'];
        if (id === third) return [id, run % 4 === 0 ? 'flaky' : 'expected'];
        if (id === alwaysFails) return [id, 'unexpected'];
        return [id, 'expected'];
      }),
    );

  const events = async () => (await api.get(`/api/quarantine-events?environment_id=${nightly}`)).body;
  const autoSnoozes = async () =>
    (await api.get(`/api/snoozes?environment_id=${nightly}`)).body.data.snoozes.filter((s: { source: string }) => s.source === 'auto');

  beforeAll(async () => {
    nightly = await environmentId('nightly');
  });

  it('when no policy is set, then the defaults are answered, and a PUT changes only the fields it gives', async () => {
    expect((await api.get('/api/quarantine-policy')).body.data.policy).toEqual({
      mode: 'off',
      threshold: 0.1,
      cap_percent: 5,
      expiry_days: 14,
      release_after_clean_runs: 10,
    });
    const put = await api.put('/api/quarantine-policy', { mode: 'suggest', threshold: 0.2 });
    expect(put.status).toBe(200);
    expect(put.body.data.policy).toEqual({ mode: 'suggest', threshold: 0.2, cap_percent: 5, expiry_days: 14, release_after_clean_runs: 10 });
    for (const [body, field] of [
      [{ threshold: 1.5 }, 'body.threshold'],
      [{ mode: 'always' }, 'body.mode'],
      [{ cap_percent: -1 }, 'body.cap_percent'],
      [{ expiry_days: 0 }, 'body.expiry_days'],
      [{ release_after_clean_runs: 2.5 }, 'body.release_after_clean_runs'],
      [{ policy: { mode: 'auto' } }, 'policy'],
    ] as const) {
      const refused = await api.put('/api/quarantine-policy', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.message).toContain(field);
    }
    expect((await api.get('/api/quarantine-policy')).body.data.policy.mode).toBe('suggest');
  });

  it('when the policy only suggests, then flaky tests are listed and nothing is quarantined', async () => {
    for (let run = 1; run <= 12; run++) await reportRun('nightly', `n${run}`, history(run));
    const listed = (await flakyTests(`environment_id=${nightly}&class=flaky`)).data.tests;
    expect(listed.map((t: { test_case_id: string }) => t.test_case_id)).toEqual([worst, second, third]);
    expect(listed.map((t: { score: number }) => t.score)).toEqual([0.5, 4 / 12, 3 / 12]);
    expect(await autoSnoozes()).toEqual([]);
    expect((await events()).data.events).toEqual([]);
  });

  it('when the policy is auto, then tests over the threshold are quarantined as auto snoozes, highest score first within the cap, and never a broken one', async () => {
    // The cap: 20% of the last complete run's 10 tests, 2 at once. The threshold lets the third in, were it not for the cap.
    await api.put('/api/quarantine-policy', { mode: 'auto', threshold: 0.2, cap_percent: 20, expiry_days: 7, release_after_clean_runs: 3 });
    const runId = await reportRun('nightly', 'n13', history(13));
    const snoozes = await autoSnoozes();
    expect(snoozes.map((s: { test_ids: string[] }) => s.test_ids)).toEqual(expect.arrayContaining([[worst], [second]]));
    expect(snoozes).toHaveLength(2);
    for (const snooze of snoozes) {
      expect(snooze).toMatchObject({ source: 'auto', scoped_to_environment_id: nightly, created_from_test_run_id: runId, created_by: null });
      expect(snooze.description).toMatch(
        /^Quarantined by the quarantine policy: flaky in \d+ of 13 runs over the last 14 days \(score 0\.\d\d, threshold 0\.2\)\. Released after 3 clean runs in a row, or on \d{4}-\d\d-\d\d\.$/,
      );
      expect(new Date(snooze.snooze_until).getTime() - clock.now.getTime()).toBe(7 * 24 * 60 * 60 * 1000);
    }
    const listed = (await flakyTests(`environment_id=${nightly}`)).data.tests;
    const quarantined = listed.filter((t: { quarantined: boolean }) => t.quarantined).map((t: { test_case_id: string }) => t.test_case_id);
    expect(quarantined.sort()).toEqual([worst, second].sort());
    expect(listed.find((t: { test_case_id: string }) => t.test_case_id === alwaysFails)).toMatchObject({ class: 'broken', quarantined: false });
    const logged = (await events()).data.events;
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ environment_id: nightly, action: 'quarantined', reason: expect.stringMatching(/^flaky in \d+ of 13 runs/) });
    expect(snoozes.map((s: { id: number }) => s.id)).toContain(logged[0].snooze_id);
  });

  it("when a quarantined test passes the policy's number of runs in a row, then it is released, and an expired one is released at its expiry", async () => {
    // `worst` passes from now on; `second` stays flaky and keeps its quarantine until it expires.
    for (let run = 14; run <= 16; run++) await reportRun('nightly', `n${run}`, { ...history(run), [worst]: 'expected', [second]: 'flaky' });
    const released = (await events()).data.events.filter((e: { action: string }) => e.action === 'released');
    expect(released).toEqual([expect.objectContaining({ test_case_id: worst, reason: 'passed its last 3 runs in a row (release_after_clean_runs 3)' })]);
    // Its slot goes to the next over the threshold; the released test stays out until it is flaky again.
    expect((await autoSnoozes()).map((s: { test_ids: string[] }) => s.test_ids[0]).sort()).toEqual([second, third].sort());

    const secondSnooze = (await autoSnoozes()).find((s: { test_ids: string[] }) => s.test_ids[0] === second);
    clock.advance(8 * 24 * 60 * 60 * 1000);
    await reportRun('nightly', 'n17', { ...history(17), [second]: 'expected' });
    const expiry = (await events()).data.events.find((e: { action: string; test_case_id: string }) => e.action === 'released' && e.test_case_id === second);
    expect(expiry).toMatchObject({
      reason: 'the quarantine expired',
      snooze_id: secondSnooze.id,
      created_at: new Date(secondSnooze.snooze_until).toISOString(),
    });
  });

  it('when the events are read, then they page newest first', async () => {
    const all = await events();
    expect(all.pagination.total).toBeGreaterThanOrEqual(4);
    const first = await api.get(`/api/quarantine-events?environment_id=${nightly}&per_page=1`);
    expect(first.body.data.events[0]).toEqual(all.data.events[0]);
    expect((await api.get('/api/quarantine-events?per_page=0')).status).toBe(400);
  });
});
