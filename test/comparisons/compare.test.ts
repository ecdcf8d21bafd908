import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome, WireAttempt } from '../../reporter/src/api/wire.ts';
import { commitsCompareUrl } from '../../server/src/runs/repository.ts';
import { attempt, attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Two runs side by side, reported through the reporter's wire format.
let server: TestServer;
let api: ReturnType<typeof client>;
let base: number;
let run: number;
const t = (n: number) => testId(n);

/** A run of `staging` with each test's attempts, ended. */
async function reportRun(commit: string, tests: Record<number, WireAttempt[]>): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'main', commit })).body.data.test_run.id as number;
  const ids = Object.keys(tests).map(Number);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((n) => listedTest(t(n), { title: `test ${n}` })), complete: true });
  expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.flatMap((n) => tests[n] as WireAttempt[]) })).status).toBe(200);
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
  return runId;
}

const outcomes = (given: Record<number, FinalOutcome>) =>
  Object.fromEntries(Object.entries(given).map(([n, outcome]) => [n, attemptsOf(t(Number(n)), outcome, `Error: test ${n} broke`)]));

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url, (await seedProject(server.sql)).key);
  await api.post('/api/environments', { name: 'staging', slug: 'staging' });
  base = await reportRun('a'.repeat(40), outcomes({ 1: 'expected', 2: 'unexpected', 3: 'unexpected', 4: 'expected', 5: 'flaky', 6: 'expected', 7: 'skipped' }));
  const now = outcomes({ 2: 'expected', 3: 'unexpected', 4: 'unexpected', 5: 'expected', 7: 'expected', 8: 'unexpected' });
  // The reporter names the failure group of a final failure.
  (now[4]?.at(-1)?.final as { failure_group_id: string | null }).failure_group_id = 'fg_tax';
  run = await reportRun('b'.repeat(40), { ...now, 1: [attempt(t(1), { duration: 300 })] });
  expect((await api.post(`/api/failure-groups/fg_tax/members`, { test_run_id: run, test_case_id: t(4) })).status).toBe(200);
});
afterAll(async () => server?.close());

const ids = (list: { tests: { test_case_id: string }[] }) => list.tests.map((test) => test.test_case_id);

describe('comparing two runs', () => {
  it('when a run is compared with an earlier one, then each list holds the tests that changed so, with both outcomes', async () => {
    const response = await api.get(`/api/test-runs/${run}/compare/${base}`);
    expect(response.status).toBe(200);
    const { comparison } = response.body.data;
    expect(comparison.run).toMatchObject({ id: run, state: 'failed', environment_slug: 'staging', branch: 'main', commit: 'b'.repeat(40) });
    expect(comparison.base).toMatchObject({ id: base, commit: 'a'.repeat(40) });
    expect(ids(comparison.new_failures)).toEqual([t(4), t(8)]);
    expect(ids(comparison.fixed)).toEqual([t(2)]);
    expect(ids(comparison.still_failing)).toEqual([t(3)]);
    expect(ids(comparison.added)).toEqual([t(8)]);
    expect(ids(comparison.removed)).toEqual([t(6)]);
    expect(ids(comparison.flaky)).toEqual([t(5)]);
    expect(comparison.new_failures.tests[0]).toEqual({
      test_case_id: t(4),
      title: 'test 4',
      file_path: 'a.spec.ts',
      runner_project: 'p',
      status: 'failed',
      base_status: 'passed',
      duration: 200,
      base_duration: 100,
      error_message: 'Error: test 4 broke',
      failure_group_id: 'fg_tax',
      failure_group_title: 'test 4 broke',
    });
    expect(comparison.removed.tests[0]).toMatchObject({ title: 'test 6', status: null, base_status: 'passed' });
    // Passed in both: the largest change first, with both durations.
    expect(
      comparison.duration_changes.tests.map((test: { test_case_id: string; base_duration: number; duration: number }) => [
        test.test_case_id,
        test.base_duration,
        test.duration,
      ]),
    ).toEqual([
      [t(1), 100, 300],
      [t(5), 200, 100],
    ]);
    expect(comparison.duration_changes.total).toBe(2);
  });

  it('when the lists are bounded, then each holds at most the limit and says how many it has in all', async () => {
    const { comparison } = (await api.get(`/api/test-runs/${run}/compare/${base}?limit=1`)).body.data;
    expect(comparison.new_failures).toMatchObject({ total: 2, tests: [{ test_case_id: t(4) }] });
    expect(comparison.duration_changes).toMatchObject({ total: 2, tests: [{ test_case_id: t(1) }] });
  });

  it("when a run is another project's, unknown, without its results, or the ids are not ids, then the answer says which", async () => {
    const other = client(server.url, (await seedProject(server.sql)).key);
    const theirs = await other.get(`/api/test-runs/${run}/compare/${base}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.message).toBe(`path.id: test run ${run} not found`);
    expect((await api.get(`/api/test-runs/${run}/compare/999999`)).body.error.message).toBe('path.otherId: test run 999999 not found');
    const bad = await api.get(`/api/test-runs/${run}/compare/abc`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/otherId/);
    expect((await api.get(`/api/test-runs/${run}/compare/${base}?limit=0`)).status).toBe(400);
    await server.sql`update test_runs set details_deleted_at = now() where id = ${base}`;
    try {
      const gone = await api.get(`/api/test-runs/${run}/compare/${base}`);
      expect(gone.status).toBe(410);
      expect(gone.body.error.message).toMatch(/^path\.otherId: the retention policy deleted test run \d+'s results/);
    } finally {
      await server.sql`update test_runs set details_deleted_at = null where id = ${base}`;
    }
  });

  it('when the repository is on GitHub or GitLab, then two commits are compared on its host; elsewhere there is no link', () => {
    const [from, to] = ['a'.repeat(40), 'b'.repeat(12)];
    expect(commitsCompareUrl('https://github.com/acme/shop.git', from, to)).toBe(`https://github.com/acme/shop/compare/${from}...${to}`);
    expect(commitsCompareUrl('https://gitlab.example.com/acme/web/shop', from, to)).toBe(`https://gitlab.example.com/acme/web/shop/-/compare/${from}...${to}`);
    expect(commitsCompareUrl('https://bitbucket.org/acme/shop', from, to)).toBeNull();
    expect(commitsCompareUrl('/srv/git/shop', from, to)).toBeNull();
    expect(commitsCompareUrl('https://github.com/acme/shop', 'main', to)).toBeNull();
  });
});
