import { createVerify, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appJwt, installationToken } from '../../server/src/notifications/github-app.ts';
import { bindRepository, instanceAdmin } from '../helpers/bindings.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { reportRun, settledDelivery } from '../helpers/notifications.ts';
import { seedProjectWithEnvironment, startTestServer, type TestServer } from '../helpers/server.ts';

const { publicKey, privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
});

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

describe("the server's GitHub App", () => {
  it('when the App signs its JWT, then it is RS256, issued by the App a minute back and expires within ten minutes', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0);
    const [header, payload, signature] = appJwt({ appId: 4242, privateKey }, now).split('.') as [string, string, string];

    expect(decode(header)).toEqual({ alg: 'RS256', typ: 'JWT' });
    const claims = decode(payload);
    expect(claims).toEqual({ iss: '4242', iat: now / 1000 - 60, exp: now / 1000 - 60 + 540 });
    expect(claims.exp - now / 1000).toBeLessThanOrEqual(600);
    expect(createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
  });

  it("when an installation's token for a repository has more than five minutes left, then it is used again there, and else (or for another repository) a new one is asked for", async () => {
    const app = { appId: 9001, privateKey };
    const start = Date.UTC(2026, 10, 25, 12, 0, 0);
    let minted = 0;
    const mint = async () => ({ token: `ghs_${++minted}`, expires_at: new Date(start + 3_600_000).toISOString() });

    expect(await installationToken(app, 1, 'acme/shop', mint, start)).toBe('ghs_1');
    expect(await installationToken(app, 1, 'acme/shop', mint, start + 54 * 60_000)).toBe('ghs_1');
    expect(await installationToken(app, 2, 'acme/shop', mint, start)).toBe('ghs_2');
    expect(await installationToken(app, 1, 'acme/shop', mint, start + 56 * 60_000)).toBe('ghs_3');
    // A token is for one repository: another of the same installation gets its own.
    expect(await installationToken(app, 1, 'acme/other', mint, start)).toBe('ghs_4');
    expect(await installationToken(app, 1, 'ACME/Other', mint, start + 54 * 60_000)).toBe('ghs_4');
    expect(minted).toBe(4);
  });

  it('when GitHub refuses a new token, then the refusal reaches the delivery and nothing is kept', async () => {
    const app = { appId: 9002, privateKey };
    const refused = Object.assign(new Error('Bad credentials'), { status: 401 });
    await expect(
      installationToken(app, 1, 'acme/shop', async () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(await installationToken(app, 1, 'acme/shop', async () => ({ token: 'ghs_after', expires_at: new Date(Date.now() + 3_600_000).toISOString() }))).toBe(
      'ghs_after',
    );
  });
});

// The App is installed on repositories of several teams; a project reaches with it only those an
// instance admin bound to the project, when a destination is saved and again at each delivery.
describe("the server's GitHub App, on the repositories bound to a project alone", () => {
  let server: TestServer;
  let github: GitHubStandIn;
  let projectId: number;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    github = await startGitHub();
    // Installed on this team's repository and on another team's, as an organisation-wide installation is.
    github.installApp(4343, publicKey, 88, ['acme/shop', 'other-team/production']);
    server = await startTestServer({
      env: { PROCTOR_GITHUB_API_URL: github.url, PROCTOR_GITHUB_APP_ID: '4343', PROCTOR_GITHUB_APP_PRIVATE_KEY: privateKey.replace(/\n/g, '\\n') },
    });
    const seeded = await seedProjectWithEnvironment(server.sql, 'staging');
    projectId = seeded.projectId;
    api = client(server.url, seeded.key);
  });

  afterAll(async () => {
    await server?.close();
    await github?.close();
  });

  it('when a destination without a token names a repository not bound to the project, then it is refused when saved with a 400 naming body.repo, and nothing is made', async () => {
    const refused = await api.post('/api/notification-destinations', { type: 'github', repo: 'other-team/production' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^body\.repo: repository other-team\/production is not bound to this project/);
    expect((await api.get('/api/notification-destinations')).body.data.destinations).toEqual([]);
    // Nor may a bound destination be moved onto it.
    await bindRepository(server.sql, server.url, projectId, 'github', 'acme/shop');
    const made = await api.post('/api/notification-destinations', { type: 'github', repo: 'ACME/Shop', environments: ['none-such'] });
    expect(made.status).toBe(400);
    expect(made.body.error.message).toContain('body.environments.0');
    const kept = await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop' });
    expect(kept.status, kept.text).toBe(201);
    const moved = await api.patch(`/api/notification-destinations/${kept.body.data.destination.id}`, { repo: 'other-team/production' });
    expect(moved.status).toBe(400);
    expect(moved.body.error.message).toContain('body.repo: repository other-team/production is not bound');
    expect((await api.get(`/api/notification-destinations/${kept.body.data.destination.id}`)).body.data.destination.repo).toBe('acme/shop');
    // With a token of the project's own, the token's rights are the limit, as before.
    expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'other-team/production', token: 'ghp_own' })).status).toBe(201);
    for (const d of (await api.get('/api/notification-destinations')).body.data.destinations) await api.delete(`/api/notification-destinations/${d.id}`);
    expect(github.requests).toEqual([]);
  });

  it('when a destination naming an unbound repository was stored without the check (before bindings), then its delivery fails at once and GitHub gets no request', async () => {
    // The finding: a success status proctor/production on another team's commit of the sender's choosing.
    await server.sql`
      insert into notification_destinations (project_id, type, repo, environments, "when", created_at, updated_at)
      values (${projectId}, 'github', 'other-team/production', '{}', 'always', now(), now())`;
    const runId = await reportRun(api, 'main', '1'.repeat(40), []);
    const delivery = await settledDelivery(api, runId);
    expect(delivery).toMatchObject({ state: 'failed', attempts: 1 });
    expect(delivery.last_error).toMatch(
      /^not sent: repository other-team\/production is not bound to this project: the server's GitHub App acts only where an instance admin bound it/,
    );
    expect(github.requests).toEqual([]);
    expect(github.statuses).toEqual([]);
    await server.sql`delete from notification_destinations where project_id = ${projectId}`;
  });

  it('when the repository is bound, then the App acts there with a token for that repository alone; unbound again, the next delivery fails without a request', async () => {
    const made = await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop' });
    expect(made.status, made.text).toBe(201);
    const runId = await reportRun(api, 'main', '2'.repeat(40), []);
    expect(await settledDelivery(api, runId)).toMatchObject({ state: 'delivered' });
    expect(github.statuses).toMatchObject([{ sha: '2'.repeat(40), state: 'success', context: 'proctor/staging' }]);
    expect(github.tokenRepositories).toEqual([['shop']]);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);

    const [binding] = (await api.get('/api/repository-bindings')).body.data.bindings;
    const { api: root } = await instanceAdmin(server.sql, server.url);
    expect((await root.delete(`/api/projects/${projectId}/repository-bindings/${binding.id}`)).status).toBe(200);
    const asked = github.requests.length;
    const after = await reportRun(api, 'main', '3'.repeat(40), []);
    expect(await settledDelivery(api, after)).toMatchObject({
      state: 'failed',
      attempts: 1,
      last_error: expect.stringContaining('is not bound to this project'),
    });
    expect(github.requests).toHaveLength(asked);
    expect(github.statuses).toHaveLength(1);
    await server.sql`delete from notification_destinations where project_id = ${projectId}`;
  });

  it("when a bound repository is not one the App's installation grants, then GitHub's refusal fails the delivery and no status is posted", async () => {
    await bindRepository(server.sql, server.url, projectId, 'github', 'acme/not-installed');
    expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/not-installed' })).status).toBe(201);
    const runId = await reportRun(api, 'main', '4'.repeat(40), []);
    expect(await settledDelivery(api, runId)).toMatchObject({ state: 'failed', attempts: 1, last_error: 'GitHub 404: Not Found' });
    expect(github.statuses.filter((status) => status.sha === '4'.repeat(40))).toEqual([]);
  });
});
