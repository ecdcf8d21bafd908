import os from 'node:os';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, type RecordedAttempt, reporterEnv, runSampleSuite } from '../helpers/playwright.ts';
import { freePort, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { runIdLinkedIn } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let key: string;
let projectId: number;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  const project = await seedProject(server.sql);
  key = project.key;
  projectId = project.projectId;
  api = client(server.url, key);
  await seedEnvironment(server.sql, projectId, 'local');
});
afterAll(async () => server?.close());

/** The run the reporter's last line links to: its id from the link, not from the words (they say its number). */
const runIdFrom = (output: string): number => runIdLinkedIn(output, /\[proctor\] \d+\/\d+ results delivered to /);

/** The final outcome of each test as Playwright decided it. */
function finalOutcomes(recorded: RecordedAttempt[]): Map<string, string> {
  const finals = new Map<string, string>();
  for (const attempt of recorded) finals.set(attempt.id, attempt.outcome);
  return finals;
}

async function storedAttempts(runId: number) {
  const rows = await server.sql<{ test_case_id: string; retry: number; status: string }[]>`
    select test_case_id, retry, status from test_results where test_run_id = ${runId} order by 1, 2`;
  return rows.map((row) => `${row.test_case_id}#${row.retry}:${row.status}`);
}

const asKeys = (recorded: RecordedAttempt[]) => recorded.map((a) => `${a.id}#${a.retry}:${a.status}`).sort();

const EXPECTED_COUNTS = { total_count: 10, success_count: 4, failed_count: 2, flaky_count: 2, skipped_count: 2 };

describe('the sample suite through the reporter', () => {
  let runId: number;
  let recorded: RecordedAttempt[];

  it('when the suite runs with the reporter, then the run is recorded with every count, state and detail', async () => {
    const run = await runSampleSuite({ env: reporterEnv(server.url, key) });
    expect(run.exitCode, run.output).toBe(1);
    expect(run.output).toMatch(/\[proctor\] 14\/14 results delivered to run #\d+ \(failed\), 2 failure\(s\) attached to failure groups http/);
    runId = runIdFrom(run.output);
    recorded = run.recorded;
    expect(recorded).toHaveLength(14);

    const response = await api.get(`/api/test-runs/${runId}`);
    expect(response.status).toBe(200);
    const { project, testRun, flattenedSummaryDetails } = response.body.data.test_run;
    expect(project).toEqual({ id: projectId, name: expect.any(String), repo_name: expect.any(String) });
    expect(testRun).toMatchObject({ id: runId, state: 'failed', environment_slug: 'local', environment_name: 'local', ...EXPECTED_COUNTS });
    expect(testRun.duration).toBeGreaterThan(1000);
    expect(new Date(testRun.run_ended_at).getTime() - new Date(testRun.run_started_at).getTime()).toBe(testRun.duration);
    expect(testRun.summary_url).toMatch(new RegExp(`/runs/${runId}\\?token=`));
    // The last line names the run as the dashboard does, by its number in the project; the link carries the id.
    expect(run.output).toContain(`results delivered to run #${testRun.number} (failed)`);
    expect(testRun.build_url).toBeNull();
    // Each attempt that ran keeps its start and its worker slot: the run page's timeline draws them.
    const slots = await server.sql<{ parallel_index: number | null; started_at: Date | null }[]>`
      select parallel_index, started_at from test_results where test_run_id = ${runId} and status <> 'skipped'`;
    expect(slots.length).toBeGreaterThan(0);
    expect(slots.filter((row) => row.parallel_index === null || row.started_at === null)).toEqual([]);

    const outcomes = finalOutcomes(recorded);
    const statusOf: Record<string, string> = { expected: 'passed', unexpected: 'failed', flaky: 'flaky', skipped: 'skipped' };
    expect(flattenedSummaryDetails).toHaveLength(10);
    for (const detail of flattenedSummaryDetails) {
      expect(detail.status).toBe(statusOf[outcomes.get(detail.test_case_id) as string]);
      expect(Object.keys(detail).sort()).toEqual(
        [
          'test_case_id',
          'title',
          'file_path',
          'runner_project',
          'status',
          'snoozed',
          'duration',
          'retries',
          'error_message',
          'failure_group_id',
          'failure_group_title',
          'skip_reason',
          'owners',
          'failure_category',
          'attachments',
        ].sort(),
      );
    }
    const failed = flattenedSummaryDetails.filter((d: { status: string }) => d.status === 'failed');
    expect(failed.map((d: { title: string }) => d.title)).toEqual(['greets a returning user', 'greets a returning user']);
    expect(failed.map((d: { runner_project: string }) => d.runner_project).sort()).toEqual(['desktop', 'mobile']);
    // The failure's kind, from its error and the steps Playwright reported: the steps are stored as sent.
    expect(failed.map((d: { failure_category: string }) => d.failure_category)).toEqual(['assertion', 'assertion']);
    const steps = await server.sql<{ failed_steps: unknown }[]>`
      select failed_steps from test_results where test_run_id = ${runId} and is_final and outcome = 'failed'`;
    expect(steps.map((row) => row.failed_steps)).toEqual([
      [{ category: 'expect', title: 'Expect "toHaveText"' }],
      [{ category: 'expect', title: 'Expect "toHaveText"' }],
    ]);
    expect(flattenedSummaryDetails.filter((d: { failure_category: string | null }) => d.failure_category !== null)).toHaveLength(4);
    // Its first stack frames in the suite's own files: the failing line of the test.
    const frames = await server.sql<{ stack_frames: string[] }[]>`
      select stack_frames from test_results where test_run_id = ${runId} and is_final and outcome = 'failed'`;
    for (const row of frames) expect(row.stack_frames[0]).toMatch(/^tests\/home\.spec\.ts:19:\d+$/);
    for (const d of failed) {
      expect(d.error_message).toContain('Welcome back');
      expect(d.error_message).not.toContain('\u001b[');
      expect(d.retries).toBe(1);
      expect(d.snoozed).toBe(false);
      expect(d.failure_group_id).toMatch(/^fg_[0-9a-f]{20}$/);
    }
    expect(failed[0].failure_group_id).toBe(failed[1].failure_group_id);
    // Named by what failed and where, in words: the same in both browsers.
    expect(failed.map((d: { failure_group_title: string }) => d.failure_group_title)).toEqual([
      "expect(locator('#banner')).toHaveText at home.spec.ts:19",
      "expect(locator('#banner')).toHaveText at home.spec.ts:19",
    ]);
    // A skipped test carries the reason its test gave; no other test has one.
    const skipped = flattenedSummaryDetails.filter((d: { status: string }) => d.status === 'skipped');
    expect(skipped.map((d: { skip_reason: string }) => d.skip_reason)).toEqual(['Saved cards are not built yet', 'Saved cards are not built yet']);
    expect(flattenedSummaryDetails.filter((d: { skip_reason: string | null }) => d.skip_reason !== null)).toHaveLength(2);
    const flaky = flattenedSummaryDetails.filter((d: { status: string }) => d.status === 'flaky');
    expect(flaky.every((d: { retries: number; error_message: string }) => d.retries === 1 && d.error_message.includes('toHaveCount'))).toBe(true);

    expect(await storedAttempts(runId)).toEqual(asKeys(recorded));
  });

  it('when the run has been recorded, then the test-case inventory lists every test with its tags and commit', async () => {
    const response = await api.get(`/api/test-cases/v2?project_id=${projectId}`);
    expect(response.body.pagination.total).toBe(10);
    const title = response.body.data.test_cases.find(
      (t: { name: string; runner_project: string }) => t.name === 'shows the shop title' && t.runner_project === 'desktop',
    );
    expect(title).toMatchObject({ file_path: 'tests/home.spec.ts', suites: ['home page'], tags: ['@smoke'] });
    expect(title.first_seen_commit_sha).toMatch(/^[0-9a-f]{40}$/);
    const tagged = await api.get(`/api/test-cases/v2?project_id=${projectId}&tags=cart`);
    expect(tagged.body.pagination.total).toBe(4);
  });

  it('when the failing tests are snoozed, then the next run records them as snoozed failures and passes', async () => {
    const failing = [...finalOutcomes(recorded)].filter(([, outcome]) => outcome === 'unexpected').map(([id]) => id);
    const snooze = await api.post('/api/snoozes', { test_ids: failing, snooze_until: new Date(Date.now() + 3_600_000).toISOString() });
    expect(snooze.status).toBe(200);
    const run = await runSampleSuite({ env: reporterEnv(server.url, key) });
    const snoozedRun = (await api.get(`/api/test-runs/${runIdFrom(run.output)}`)).body.data.test_run;
    expect(snoozedRun.testRun).toMatchObject({ state: 'passed', ...EXPECTED_COUNTS });
    const failed = snoozedRun.flattenedSummaryDetails.filter((d: { status: string }) => d.status === 'failed');
    expect(failed.every((d: { snoozed: boolean }) => d.snoozed)).toBe(true);

    // The same failure in two separate runs lands in the same group, one sighting per run.
    const firstRun = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.flattenedSummaryDetails;
    const groupIds = new Set(
      [...firstRun, ...snoozedRun.flattenedSummaryDetails]
        .filter((d: { status: string }) => d.status === 'failed')
        .map((d: { failure_group_id: string }) => d.failure_group_id),
    );
    expect(groupIds.size).toBe(1);
    const group = (await api.get(`/api/failure-groups/${[...groupIds][0]}`)).body.data;
    expect(group.failure_group).toMatchObject({ member_count: 2, occurrence_count: 4, last_test_run_id: snoozedRun.testRun.id, status: 'open' });
    // Stable across runs: the second run's failure keeps the group's title.
    expect(group.failure_group.title).toBe("expect(locator('#banner')).toHaveText at home.spec.ts:19");
    expect(
      new Set(
        snoozedRun.flattenedSummaryDetails
          .filter((d: { status: string }) => d.status === 'failed')
          .map((d: { failure_group_title: string }) => d.failure_group_title),
      ),
    ).toEqual(new Set([group.failure_group.title]));
    expect(group.members.map((m: { test_case_id: string }) => m.test_case_id).sort()).toEqual(failing.sort());
    expect(group.members.every((m: { sighting_count: number; state: string }) => m.sighting_count === 2 && m.state === 'active')).toBe(true);
    await api.delete(`/api/snoozes/${snooze.body.data.snooze.id}`);
  });

  it('when runs are listed, then the filters of the contract apply, newest first', async () => {
    const all = await api.get('/api/test-runs');
    expect(all.body.data.test_runs.map((r: { id: number }) => r.id)).toEqual(
      [...all.body.data.test_runs.map((r: { id: number }) => r.id)].sort((a, b) => b - a),
    );
    const failedOnly = await api.get('/api/test-runs?state=failed&environment=local');
    expect(failedOnly.body.data.test_runs.map((r: { id: number }) => r.id)).toContain(runId);
    expect(failedOnly.body.data.test_runs.every((r: { state: string }) => r.state === 'failed')).toBe(true);
    expect((await api.get('/api/test-runs?state=passed,failed')).body.pagination.total).toBeGreaterThanOrEqual(2);
    expect((await api.get('/api/test-runs?environment=nowhere')).body.data.test_runs).toEqual([]);
    expect((await api.get('/api/test-runs?state=sleeping')).status).toBe(400);
  });

  it('when the run page is opened in Chromium, then a person sees the title, the counts and the failure text', async () => {
    const testRun = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      const page = await browser.newPage();
      const response = await page.goto(testRun.summary_url);
      expect(response?.status()).toBe(200);
      expect(await page.title()).toContain(`Run #${testRun.number} failed`);
      expect(await page.locator('[data-count="failed"] b').textContent()).toBe('2');
      expect(await page.locator('[data-count="passed"] b').textContent()).toBe('4');
      expect(await page.locator('[data-count="flaky"] b').textContent()).toBe('2');
      const firstError = page.locator('pre.error').first();
      expect(await firstError.isVisible()).toBe(true);
      expect(await firstError.textContent()).toContain('Welcome back');
      expect(await page.getByRole('heading', { name: 'Failed (2)' }).isVisible()).toBe(true);
      expect(await page.getByRole('heading', { name: /By runner project/ }).isVisible()).toBe(true);
      const wrongToken = await page.goto(testRun.summary_url.replace(/token=.*/, 'token=forged'));
      expect(wrongToken?.status()).toBe(404);
    } finally {
      await browser.close();
    }
  });
});

describe('sharding', () => {
  it("when the suite runs as 2 jobs of a GitLab merge request's pipeline, then they make one run with the counts of the whole suite, its pipeline, branch, commit and merge request", async () => {
    const pipeline = String(Date.now());
    const gitlab = {
      GITLAB_CI: 'true',
      CI_PIPELINE_ID: pipeline,
      CI_PIPELINE_URL: `https://gitlab.example.com/shop/web/-/pipelines/${pipeline}`,
      CI_COMMIT_REF_NAME: 'main',
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'faster-checkout',
      CI_MERGE_REQUEST_IID: '17',
      CI_COMMIT_SHA: '1ecfd275763eff1d6b4844ea3168962458c9f27a',
    };
    const env = { ...reporterEnv(server.url, key), ...gitlab };
    // Each job's own output folder, as two CI machines have: sharing one, a retry's trace files of
    // one shard were removed by the other's start (ENOENT), and its flaky test failed again.
    const shard = (n: number) =>
      runSampleSuite({ env, args: [`--shard=${n}/2`, `--output=${path.join(os.tmpdir(), `proctor-gitlab-shard-${pipeline}-${n}`)}`] });
    const [first, second] = await Promise.all([shard(1), shard(2)]);
    const runId = runIdFrom(first.output);
    expect(runIdFrom(second.output)).toBe(runId);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run;
    expect(run.testRun).toMatchObject({ state: 'failed', total_shards: 2, ...EXPECTED_COUNTS });
    expect(run.testRun).toMatchObject({
      build_url: gitlab.CI_PIPELINE_URL,
      test_run_branch: 'faster-checkout',
      test_run_head_sha: gitlab.CI_COMMIT_SHA,
      pull_request: 17,
    });
    expect(await storedAttempts(runId)).toEqual(asKeys([...first.recorded, ...second.recorded]));
    const shards = await server.sql`select shard, status from test_run_shards where test_run_id = ${runId} order by shard`;
    expect(shards.map((s) => s.shard)).toEqual([1, 2]);
  });
});

describe('faults', () => {
  it('when the server is killed and restarted in the middle of a run, then the stored results equal what Playwright produced', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: server.db.url, PORT: String(port), PROCTOR_DEMO: 'false', PROCTOR_DB_POOL_MAX: server.db.embedded ? '1' : '4' };
    let proctor = spawnProctor(['serve'], env);
    await waitForHealth(url);
    let restarted: Promise<void> = Promise.resolve();
    let killedAt = 0;
    const run = await runSampleSuite({
      env: reporterEnv(url, key),
      onStart: () => {
        restarted = (async () => {
          await new Promise((resolve) => setTimeout(resolve, 5000));
          proctor.child.kill('SIGKILL');
          await proctor.exited;
          killedAt = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 2000));
          proctor = spawnProctor(['serve'], env);
          await waitForHealth(url);
        })();
      },
    });
    const finishedAt = Date.now();
    await restarted;
    try {
      expect(killedAt).toBeGreaterThan(0);
      expect(finishedAt - killedAt, 'the server was down while the suite still ran').toBeGreaterThan(3000);
      expect(run.output).toMatch(/\[proctor\] 14\/14 results delivered to run #\d+ \(failed\), 2 failure\(s\) attached/);
      const runId = runIdFrom(run.output);
      expect(await storedAttempts(runId)).toEqual(asKeys(run.recorded));
      const testRun = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
      expect(testRun).toMatchObject({ state: 'failed', ...EXPECTED_COUNTS });
    } finally {
      proctor.child.kill('SIGTERM');
      await proctor.exited;
    }
  });

  it("when the server cannot be reached at all, then Playwright's outcome is unchanged and the line says why", async () => {
    const port = await freePort();
    const run = await runSampleSuite({
      env: { ...reporterEnv(`http://127.0.0.1:${port}`, key), PROCTOR_CONNECT_BUDGET_S: '2' },
      args: ['--grep', 'shop title'],
    });
    expect(run.exitCode).toBe(0);
    expect(run.output.trim().split('\n').pop()).toMatch(
      /^\[proctor\] 0\/2 results delivered; gave up: the server could not be reached \(ECONNREFUSED on \/api\/[^)]+\), so nothing more is sent \(PROCTOR_CONNECT_BUDGET_S=2\)/,
    );
  });
});
