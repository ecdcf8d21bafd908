import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_SLOWER_RULES, slowerLines, slowerThanHistory, withStart } from '../../server/src/notifications/request-slower.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { type GitLabStandIn, problemsWithGitLabRequest, startGitLab } from '../helpers/gitlab.ts';
import { client } from '../helpers/http.ts';
import { settledDelivery } from '../helpers/notifications.ts';
import { runNumber } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// The tests a pull (merge) request's run passed slower than on the branch it merges into, in the
// request's comment on GitHub and note on GitLab: a test 30% slower than its steady history is
// named; one as slow as its noisy history already swings, one 19% slower, one 40 ms slower, and any
// test with fewer than 10 passing runs there are not. Each names the request's run where it started.

let server: TestServer;
let api: ReturnType<typeof client>;
let github: GitHubStandIn;
let gitlab: GitLabStandIn;
/** The request's first run: test 1 already 30% slower in it, before the base branch had history enough to say so. */
let firstRequestRun: number;

// A fixed sequence of noise (±5%), the same at every run of the file.
const wobble = (run: number) => 1 + (((run * 37) % 11) - 5) / 100;

/** A run of `branch` where tests 1, 2 and 4 pass in these milliseconds. */
async function reportDurations(branch: string, commit: string, durations: Record<1 | 2 | 4, number>): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch, commit })).body.data.test_run.id as number;
  const tests = [1, 2, 4] as const;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map((n) => listedTest(testId(n), { title: `test ${n} <b>@all</b>` })) });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: tests.map((n) => attempt(testId(n), { duration: durations[n] })) });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
  return runId;
}

/** Test 1 steady at 1 s, test 2 at 100 ms, test 4 swinging between 800 ms and 1.4 s. */
const history = (run: number) => ({ 1: Math.round(1000 * wobble(run)), 2: Math.round(100 * wobble(run)), 4: run % 2 === 0 ? 800 : 1400 });

beforeAll(async () => {
  github = await startGitHub();
  gitlab = await startGitLab();
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url, PROCTOR_GITLAB_API_URL: gitlab.url } });
  const { projectId, key } = await seedProject(server.sql);
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
  expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).status).toBe(201);
  expect((await api.post('/api/notification-destinations', { type: 'gitlab', project: 'acme/shop', token: 'glpat-test' })).status).toBe(201);
  github.openPull('feature-x', 7);
  gitlab.openMergeRequest('feature-x', 7, 'main');
}, 300_000);

afterAll(async () => {
  await server?.close();
  await github?.close();
  await gitlab?.close();
});

const bodies = () => [github.comments.at(-1)?.body ?? '', gitlab.notes.at(-1)?.body ?? ''];

describe("a request's slower tests", () => {
  it('when the base branch has fewer than 10 passing runs of a test, then no test is called slower', async () => {
    for (let run = 1; run <= 9; run++)
      expect(await settledDelivery(api, await reportDurations('main', 'a'.repeat(40), history(run)))).toMatchObject({ state: 'delivered' });
    firstRequestRun = await reportDurations('feature-x', 'b'.repeat(40), { 1: 1300, 2: 150, 4: 1600 });
    expect(await settledDelivery(api, firstRequestRun)).toMatchObject({ state: 'delivered' });
    for (const body of bodies()) {
      expect(body).toContain('### staging: passed');
      expect(body).not.toContain('slower');
    }
  }, 120_000);

  it('when a test runs 30% slower than its steady history, then the comment and the note name it with the run where it started, and not the ones within their noise or too few milliseconds slower', async () => {
    for (let run = 10; run <= 14; run++)
      expect(await settledDelivery(api, await reportDurations('main', 'a'.repeat(40), history(run)))).toMatchObject({ state: 'delivered' });
    // Test 2: +40% but 40 ms; test 4: above its median by 30%, not above its slowest.
    const runId = await reportDurations('feature-x', 'c'.repeat(40), { 1: 1300, 2: 140, 4: 1400 });
    expect(await settledDelivery(api, runId)).toMatchObject({ state: 'delivered' });
    // It was as slow in the request's first run already.
    const started = await runNumber(server.sql, firstRequestRun);
    for (const body of bodies()) {
      expect(body).toContain(
        `1 test passed slower than on \`main\` (than each one's median and slowest of its last passing runs there):\n- test 1 &lt;b&gt;@\u200Ball&lt;/b&gt; (a.spec.ts): 995 ms → 1.3 s (+31%), since run #${started}`,
      );
      expect(body).not.toMatch(/test [24] /);
    }
    expect(github.comments).toHaveLength(1);
    expect(gitlab.notes).toHaveLength(1);
  }, 120_000);

  it('when a test is 19% slower, then it is not named; slower again, then its slowdown starts anew; back to its usual duration, then the part is gone', async () => {
    expect(await settledDelivery(api, await reportDurations('feature-x', 'd'.repeat(40), { 1: 1190, 2: 100, 4: 1000 }))).toMatchObject({ state: 'delivered' });
    for (const body of bodies()) expect(body).not.toContain('slower');
    const again = await reportDurations('feature-x', 'e'.repeat(40), { 1: 1400, 2: 100, 4: 1000 });
    expect(await settledDelivery(api, again)).toMatchObject({ state: 'delivered' });
    for (const body of bodies()) expect(body).toContain(`995 ms → 1.4 s (+41%), since run #${await runNumber(server.sql, again)}`);
    expect(await settledDelivery(api, await reportDurations('feature-x', 'f'.repeat(40), { 1: 1000, 2: 100, 4: 1000 }))).toMatchObject({ state: 'delivered' });
    for (const body of bodies()) expect(body).not.toContain('slower');
  }, 120_000);

  it("when every request Proctor made is checked against GitHub's and GitLab's API descriptions, then each is a valid call", () => {
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
    expect(gitlab.requests.flatMap(problemsWithGitLabRequest)).toEqual([]);
  });
});

describe('the threshold', () => {
  const row = (duration_ms: number, history_ms: number[]) => ({ test_case_id: 't', title: 't', file_path: '', duration_ms, history_ms });
  const steady = Array.from({ length: 10 }, (_, n) => 1000 + n * 5);

  it('when a duration is above the slowest of 10 runs by the share and the milliseconds, then it is slower; a hair under either, or with 9 runs, it is not', () => {
    // Median 1022.5: 20% more is 1227.
    expect(slowerThanHistory([row(1228, steady)])).toHaveLength(1);
    expect(slowerThanHistory([row(1226, steady)])).toEqual([]);
    expect(slowerThanHistory([row(1300, steady.slice(1))])).toEqual([]);
    expect(REQUEST_SLOWER_RULES.minHistory).toBe(10);
    // 100 ms tests: 49 ms more is under the milliseconds however large the share.
    const short = Array.from({ length: 10 }, () => 100);
    expect(slowerThanHistory([row(149, short)])).toEqual([]);
    expect(slowerThanHistory([row(150, short)])).toHaveLength(1);
    // A history with a run as slow: noise of that size, not news.
    expect(slowerThanHistory([row(1300, [...steady.slice(1), 1300])])).toEqual([]);
  });

  it("when a test passed slow in the request's runs back to one it passed as usual in, then its slowdown started in the first slow one after it; runs it did not pass in are skipped", () => {
    const [slow] = slowerThanHistory([row(1300, steady)]);
    const at = (run_id: number, duration_ms: number) => ({ test_case_id: 't', run_id, run_number: run_id + 100, duration_ms });
    // Newest first: 9 and 7 slow, 8 not passed, 6 as usual, 5 slow again (an earlier streak).
    expect(withStart([slow!], [at(9, 1290), at(7, 1310), at(6, 1010), at(5, 1400), { ...at(4, 1400), test_case_id: 'u' }])).toEqual([
      expect.objectContaining({ started_run_id: 7, started_run_number: 107 }),
    ]);
    expect(withStart([slow!], [at(9, 1010)])).toEqual([expect.objectContaining({ started_run_id: null, started_run_number: null })]);
    expect(slowerLines(withStart([slow!], [at(9, 1300)]), 'main')).toMatch(/\(\+\d+%\), since run #109$/);
  });

  it('when more than 10 tests are slower, then the largest rises are named first and the rest counted', () => {
    const many = Array.from({ length: 13 }, (_, n) => ({ ...row(1300 + n * 10, steady), test_case_id: `t${n}`, title: `t${n}` }));
    const lines = slowerLines(slowerThanHistory(many), 'main')!.split('\n');
    expect(lines[0]).toMatch(/^13 tests passed slower than on `main`/);
    expect(lines[1]).toMatch(/^- t12: /);
    expect(lines.at(-1)).toBe('- and 3 more');
    expect(lines).toHaveLength(12);
    expect(slowerLines([], 'main')).toBeNull();
  });
});
