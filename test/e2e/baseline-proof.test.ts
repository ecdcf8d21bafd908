import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneCheckout, git, makeSuiteRepository, reportChangedPage, type SuiteRepository } from '../helpers/baselines.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { REPORTER, reporterEnv, ROOT } from '../helpers/playwright.ts';
import { runReportedSuite } from '../helpers/reports.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { proofOf } from '../../server/src/visual/baselines.ts';

// The next run proves the baselines (issue 57, point 4): approved images pushed to the project's
// repository, Proctor triggers a rerun of the changed tests on the new commit; the suite, checked
// out at that commit, reports into it and passes; the baselines API and the review page link that
// run and say "proved by run #N", and the `proctor/visual` status says so.

const CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

interface Commit {
  id: number;
  state: string;
  commit_sha: string | null;
  rerun: { run_id: number; run_number: number } | null;
  proof: { run_id: number; run_number: number; state: string; summary: string } | null;
}

let server: TestServer;
let github: GitHubStandIn;
let repository: SuiteRepository;
let api: ReturnType<typeof client>;
let key: string;
let projectId: number;
let runId: number;
let commit: Commit;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const commitOf = async (): Promise<Commit> => (await api.get(`/api/test-runs/${runId}/baselines`)).body.data.commits[0] as Commit;

beforeAll(async () => {
  github = await startGitHub();
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url } });
  repository = await makeSuiteRepository();
  const project = await seedProject(server.sql);
  ({ key, projectId } = project);
  await seedEnvironment(server.sql, projectId, 'local');
  await server.sql`update projects set repo_url = ${repository.remote} where id = ${projectId}`;
  api = client(server.url, key);
  expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).status).toBe(201);
  github.openPull('feature-x', 5);
  // Triggered by Proctor (no executor here): the suite reports into the run, as an executor's shards do.
  const triggered = await api.put('/api/test-runs', { environment: 'local', branch: 'feature-x' });
  expect(triggered.status, JSON.stringify(triggered.body)).toBeLessThan(300);
  runId = triggered.body.data.test_run.id;
  const suite = await reportChangedPage(repository, server.url, key, { PROCTOR_RUN_ID: String(runId), PROCTOR_ENVIRONMENT: '' });
  expect(suite.exitCode, suite.output).toBe(1);
  const total = await until(
    async () => (await api.get(`/api/test-runs/${runId}/visual-changes`)).body.data.counts.total as number,
    (n) => n === 4,
  );
  expect(total).toBe(4);
  expect((await api.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'approved' })).status).toBe(200);
  commit = await until(commitOf, (c) => c !== undefined && c.state !== 'queued');
}, 200_000);

afterAll(async () => {
  await server?.close();
  await github?.close();
  if (repository)
    for (const dir of fs.readdirSync(path.dirname(repository.dir))) {
      if (dir.startsWith(path.basename(repository.dir))) fs.rmSync(path.join(path.dirname(repository.dir), dir), { recursive: true, force: true });
    }
});

describe('the rerun that proves pushed baselines', () => {
  it('when the approved images are pushed, then Proctor triggers a rerun of the four changed tests on the new commit, and the commit awaits its proof', async () => {
    expect(commit).toMatchObject({ state: 'committed' });
    expect(git(repository.remote, 'rev-parse', 'feature-x')).toBe(commit.commit_sha);
    expect(commit.rerun).not.toBeNull();
    const [rerun] = await server.sql<
      { state: string; origin: string; rerun_source_id: number; rerun_only_failed: boolean; commit: string; branch: string; tests: number }[]
    >`
      select state, origin, rerun_source_id, rerun_only_failed, "commit", coalesce(build_branch, test_run_branch) as branch, cardinality(test_case_ids) as tests
      from test_runs where id = ${commit.rerun?.run_id as number}`;
    expect(rerun).toEqual({
      state: 'pending',
      origin: 'api',
      rerun_source_id: runId,
      rerun_only_failed: true,
      commit: commit.commit_sha,
      branch: 'feature-x',
      tests: 4,
    });
    expect(commit.proof).toEqual({
      run_id: commit.rerun?.run_id,
      run_number: commit.rerun?.run_number,
      state: 'awaiting',
      summary: `run #${commit.rerun?.run_number} is under way`,
    });
  });

  it('when the suite at the new commit reports into the rerun and passes, then the commit is proved by that run, on the API, the review page and the status', async () => {
    const checkout = cloneCheckout(repository, 'proof');
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(commit.commit_sha);
    const rerunId = commit.rerun?.run_id as number;
    const suite = await runReportedSuite({
      cli: CLI,
      cwd: path.join(checkout, 'e2e'),
      reporter: REPORTER,
      reportFile: path.join(checkout, 'report.json'),
      env: { ...process.env, ...reporterEnv(server.url, key), SHADE: 'black', PROCTOR_RUN_ID: String(rerunId), PROCTOR_ENVIRONMENT: '' },
      args: [`--output=${path.join(checkout, 'e2e', 'results')}`],
    });
    expect(suite.exitCode, suite.output).toBe(0);
    await waitForRun(api, rerunId);
    const proved = await until(commitOf, (c) => c.proof?.state === 'passed');
    const number = commit.rerun?.run_number as number;
    expect(proved.proof).toEqual({ run_id: rerunId, run_number: number, state: 'passed', summary: `proved by run #${number}` });

    const member = await seedUser(server.sql, [projectId], { role: 'member' });
    const token = await createLoginLink(server.sql, member.userId, server.clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    const html = await (await fetch(`${server.url}/projects/${projectId}/runs/${runId}/visual`, { headers: { cookie } })).text();
    expect(html).toContain(`<a href="/projects/${projectId}/runs/${rerunId}" data-baseline-rerun>run #${number}</a>`);
    expect(html).toContain(`<a href="/projects/${projectId}/runs/${rerunId}" data-baseline-proof="passed">proved by run #${number}</a>`);

    const [queued] = await server.sql<{ state: string; description: string }[]>`
      select state, description from visual_status_deliveries where test_run_id = ${runId}`;
    expect(queued).toEqual({ state: 'success', description: `baselines ${commit.commit_sha?.slice(0, 12)} proved by run #${number}` });
    const sent = await until(
      async () => github.statuses.filter((s) => s.context === 'proctor/visual').map((s) => s.description),
      (descriptions) => descriptions.at(-1) === queued?.description,
    );
    expect(sent).toContain(`4 baselines committed in ${commit.commit_sha?.slice(0, 12)}; rerun #${number} proving them`);
    expect(sent.at(-1)).toBe(queued?.description);
    // The pull request's comment says it too: its section shows the newest run (the rerun), with the reviewed run's line.
    const line = await until(
      async () =>
        github.comments
          .find((c) => c.issue === 5)
          ?.body.split('\n')
          .find((l) => l.startsWith('**Visual changes')),
      (found) => found?.includes('proved by') === true,
    );
    const [reviewed] = await server.sql<{ number: number }[]>`select number from test_runs where id = ${runId}`;
    expect(line).toBe(
      `**Visual changes of run \\#\u200B${reviewed?.number}:** 4 changes: 0 awaiting review, 4 approved, 0 rejected; baselines committed in ${commit.commit_sha?.slice(0, 12)}, proved by run #${number} ([review](${server.url}/projects/${projectId}/runs/${runId}/visual)).`,
    );
    expect(github.comments.find((c) => c.issue === 5)?.body).toContain(`[Run #${number}](`);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  }, 120_000);
});

describe('the proof of a run', () => {
  it('when every approved test passed (or passed on a retry), then it is passed; when one failed, failing; when none ran, not_run', () => {
    expect(
      proofOf(
        ['a', 'b'],
        new Map([
          ['a', 'passed'],
          ['b', 'flaky'],
        ]),
      ),
    ).toBe('passed');
    expect(
      proofOf(
        ['a', 'b'],
        new Map([
          ['a', 'passed'],
          ['b', 'failed'],
        ]),
      ),
    ).toBe('failing');
    expect(proofOf(['a', 'b'], new Map([['a', 'skipped']]))).toBe('not_run');
  });
});
