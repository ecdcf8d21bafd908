import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { bindRepository } from '../helpers/bindings.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { reportRun, settledDelivery } from '../helpers/notifications.ts';
import { runNumber, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let api: ReturnType<typeof client>;
let github: GitHubStandIn;

const report = (branch: string, commit: string, failing: number[]) => reportRun(api, branch, commit, failing);
const settled = (runId: number) => settledDelivery(api, runId);

beforeAll(async () => {
  github = await startGitHub();
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url } });
  const { projectId, key } = await seedProject(server.sql);
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
});

afterAll(async () => {
  await server?.close();
  await github?.close();
});

describe('GitHub', () => {
  let destinationId: number;

  beforeAll(async () => {
    destinationId = (await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).body.data.destination.id;
    github.openPull('feature-x', 7);
  });

  it("when a pull request's run fails, then its commit gets a failure status and the pull request one comment saying which failures the branch brought", async () => {
    const mainRun = await report('main', 'a'.repeat(40), [2]);
    expect(await settled(mainRun)).toMatchObject({ state: 'delivered' });
    expect(github.comments).toEqual([]);
    const runId = await report('feature-x', 'b'.repeat(40), [2, 4]);
    expect(await settled(runId)).toMatchObject({ state: 'delivered', attempts: 1 });

    expect(github.statuses.map((s) => [s.sha.slice(0, 1), s.state, s.context])).toEqual([
      ['a', 'failure', 'proctor/staging'],
      ['b', 'failure', 'proctor/staging'],
    ]);
    expect(github.statuses[1]).toMatchObject({ description: '1 passed, 2 failed, 0 flaky, 0 skipped' });
    expect(github.statuses[1]?.target_url).toMatch(new RegExp(`/runs/${runId}\\?token=`));
    expect(github.comments).toHaveLength(1);
    const [comment] = github.comments;
    expect(comment?.issue).toBe(7);
    expect(comment?.body).toContain(`[Run #${await runNumber(server.sql, runId)}]`);
    expect(comment?.body).toContain(`1 of 2 failures are not on \`main\` (compared with its run \\#\u200B${mainRun})`);
    expect(comment?.body).toContain('- **new** test 4 (a.spec.ts · p): boom (2) · **brought by this branch**');
    expect(comment?.body).toContain('- **known** test 2 (a.spec.ts · p): boom · also fails on the default branch');
  });

  it('when the pull request runs again, then the same comment is edited in place and the new commit gets its status', async () => {
    const runId = await report('feature-x', 'c'.repeat(40), []);
    expect(await settled(runId)).toMatchObject({ state: 'delivered' });
    expect(github.comments).toHaveLength(1);
    expect(github.comments[0]?.body).toContain(`[Run #${await runNumber(server.sql, runId)}]`);
    expect(github.comments[0]?.body).toContain('### staging: passed');
    expect(github.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    expect(github.statuses.at(-1)).toMatchObject({ sha: 'c'.repeat(40), state: 'success' });
  });

  it("when the pull request's failures have owners, then the delivered comment mentions the owners of the failures the branch brought alone", async () => {
    const owners = { 2: ['@acme/payments'], 4: ['@acme/checkout', 'carol@example.com'] };
    const runId = await reportRun(api, 'feature-x', 'd'.repeat(40), [2, 4], owners);
    expect(await settled(runId)).toMatchObject({ state: 'delivered' });
    expect(github.comments).toHaveLength(1);
    const body = github.comments[0]?.body ?? '';
    expect(body).toContain(`[Run #${await runNumber(server.sql, runId)}]`);
    expect(body).toContain('Owners of these failures: @acme/checkout `carol@example.com`');
    expect(body).not.toContain('@acme/payments');
  });

  it("when every request Proctor made is checked against GitHub's published OpenAPI description, then each is a valid call of its operation, with the token", () => {
    expect(github.requests.length).toBeGreaterThanOrEqual(8);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
    expect(new Set(github.requests.map((r) => r.headers.authorization))).toEqual(new Set(['token ghp_test']));
    expect(new Set(github.requests.map((r) => r.headers['x-github-api-version']))).toEqual(new Set(['2022-11-28']));
    // The checker itself refuses what GitHub would.
    expect(problemsWithGitHubRequest({ ...github.requests[0]!, body: { state: 'sunny' } }).join()).toMatch(/must be equal to one of the allowed values/);
    expect(problemsWithGitHubRequest({ ...github.requests[0]!, path: '/repos/acme/shop/statuz/abc' }).join()).toMatch(/no such operation/);
  });

  it('when the pull request answer has no base repository and the comment fails once, then the default branch comes from the repository and the retry does not post the status again', async () => {
    github.openPull('feature-bare', 8, 'main', true);
    github.failCommentsNext(1, 502);
    const runId = await report('feature-bare', 'f'.repeat(40), [4]);
    await waitUntil(
      async () => (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries[0]?.attempts >= 1,
      20_000,
      'a first attempt',
    );
    // The retry is due 2 s later on the server's clock.
    server.clock.advance(5000);
    expect(await settled(runId)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(github.statuses.filter((s) => s.sha === 'f'.repeat(40))).toHaveLength(1);
    expect(github.requests.filter((r) => r.method === 'GET' && r.path === '/repos/acme/shop')).not.toHaveLength(0);
    const comment = github.comments.find((c) => c.issue === 8);
    expect(comment?.body).toContain('failures are not on `main`');
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  }, 30_000);

  it('when GitHub refuses the token, then the delivery fails at once with its answer, and the token is never shown', async () => {
    expect((await api.patch(`/api/notification-destinations/${destinationId}`, { token: 'ghp_refused' })).status).toBe(200);
    const runId = await report('feature-x', 'd'.repeat(40), [4]);
    expect(await settled(runId)).toMatchObject({ state: 'failed', attempts: 1, last_error: 'GitHub 401: Bad credentials - https://docs.github.com/rest' });
    expect((await api.get(`/api/notification-destinations/${destinationId}`)).text).not.toContain('ghp_');
    expect(server.logs.join('')).not.toContain('ghp_');
  });
});

describe('GitHub through a GitHub App', () => {
  it("when a destination has no token and its repository is bound, then the server's App finds its installation there and acts with that installation's token for the repository alone", async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    const appHub = await startGitHub();
    appHub.installApp(4242, publicKey, 77);
    appHub.openPull('feature-y', 9);
    const appServer = await startTestServer({
      env: { PROCTOR_GITHUB_API_URL: appHub.url, PROCTOR_GITHUB_APP_ID: '4242', PROCTOR_GITHUB_APP_PRIVATE_KEY: privateKey.replace(/\n/g, '\\n') },
    });
    try {
      const { projectId, key } = await seedProject(appServer.sql);
      await seedEnvironment(appServer.sql, projectId, 'staging');
      // The App acts only where an instance admin bound the repository to the project.
      await bindRepository(appServer.sql, appServer.url, projectId, 'github', 'acme/shop');
      const appApi = client(appServer.url, key);
      const created = await appApi.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop' });
      expect(created.body.data.destination).toMatchObject({ has_secret: false });
      const runId = (await appApi.post('/api/test-runs/report', { environment: 'staging', branch: 'feature-y', commit: 'e'.repeat(40) })).body.data.test_run.id;
      await appApi.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1))] });
      await appApi.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(testId(1), 'expected') });
      await appApi.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
      await waitUntil(
        async () => (await appApi.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries[0]?.state === 'delivered',
        20_000,
        'the delivery',
      );

      expect(appHub.requests.slice(0, 2).map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /repos/acme/shop/installation',
        'POST /app/installations/77/access_tokens',
      ]);
      expect(appHub.tokenRepositories).toEqual([['shop']]);
      expect(appHub.requests.slice(2).every((r) => r.headers.authorization === 'token ghs_an-installation-token')).toBe(true);
      expect(appHub.statuses).toMatchObject([{ sha: 'e'.repeat(40), state: 'success' }]);
      expect(appHub.comments).toHaveLength(1);
      expect(appHub.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
      expect(appServer.logs.join('')).not.toContain('PRIVATE KEY');
    } finally {
      await appServer.close();
      await appHub.close();
    }
  });
});
