import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindRepository } from '../helpers/bindings.ts';
import { type GitLabStandIn, problemsWithGitLabRequest, startGitLab } from '../helpers/gitlab.ts';
import { client } from '../helpers/http.ts';
import { reportRun, settledDelivery } from '../helpers/notifications.ts';
import { runNumber, waitUntil } from '../helpers/runs.ts';
import { seedProjectWithEnvironment, startTestServer, type TestServer } from '../helpers/server.ts';

// A GitLab destination, through @gitbeaker/rest against a stand-in of GitLab's API on loopback:
// a commit status on the run's commit and one note on the merge request of its branch, edited in
// place by later runs, with the failures labelled as on GitHub.

let server: TestServer;
let api: ReturnType<typeof client>;
let gitlab: GitLabStandIn;

const report = (branch: string, commit: string, failing: number[]) => reportRun(api, branch, commit, failing);
const settled = (runId: number) => settledDelivery(api, runId);

beforeAll(async () => {
  gitlab = await startGitLab();
  server = await startTestServer({ env: { PROCTOR_GITLAB_API_URL: gitlab.url } });
  const { key } = await seedProjectWithEnvironment(server.sql, 'staging');
  api = client(server.url, key);
});

afterAll(async () => {
  await server?.close();
  await gitlab?.close();
});

describe('GitLab', () => {
  let destinationId: number;

  beforeAll(async () => {
    const created = await api.post('/api/notification-destinations', { type: 'gitlab', project: 'acme/web/shop', token: 'glpat-test' });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.destination).toMatchObject({ type: 'gitlab', project: 'acme/web/shop', url: null, repo: null, has_secret: true });
    destinationId = created.body.data.destination.id;
    gitlab.openMergeRequest('feature-x', 7, 'main');
  });

  it("when a merge request's run fails, then its commit gets a failed status and the merge request one note saying which failures the branch brought", async () => {
    const mainRun = await report('main', 'a'.repeat(40), [2]);
    expect(await settled(mainRun)).toMatchObject({ state: 'delivered' });
    expect(gitlab.notes).toEqual([]);
    const runId = await report('feature-x', 'b'.repeat(40), [2, 4]);
    expect(await settled(runId)).toMatchObject({ state: 'delivered', attempts: 1 });

    expect(gitlab.statuses.map((s) => [s.project, s.sha.slice(0, 1), s.state, s.name, s.ref])).toEqual([
      ['acme/web/shop', 'a', 'failed', 'proctor/staging', 'main'],
      ['acme/web/shop', 'b', 'failed', 'proctor/staging', 'feature-x'],
    ]);
    expect(gitlab.statuses[1]).toMatchObject({ description: '1 passed, 2 failed, 0 flaky, 0 skipped' });
    expect(gitlab.statuses[1]?.target_url).toMatch(new RegExp(`/runs/${runId}\\?token=`));
    expect(gitlab.notes).toHaveLength(1);
    const [note] = gitlab.notes;
    expect(note?.iid).toBe(7);
    expect(note?.body).toContain(`[Run #${await runNumber(server.sql, runId)}]`);
    expect(note?.body).toContain(`1 of 2 failures are not on \`main\` (compared with its run \\#\u200B${mainRun})`);
    expect(note?.body).toContain('- **new** test 4 (a.spec.ts · p): boom (2) · **brought by this branch**');
    expect(note?.body).toContain('- **known** test 2 (a.spec.ts · p): boom · also fails on the target branch');
    expect(note?.body).toContain('<sub>Edited in place by each run of this merge request.</sub>');
  });

  it('when the merge request runs again, then the same note is edited in place and the new commit gets its status', async () => {
    const runId = await report('feature-x', 'c'.repeat(40), []);
    expect(await settled(runId)).toMatchObject({ state: 'delivered' });
    expect(gitlab.notes).toHaveLength(1);
    expect(gitlab.notes[0]?.body).toContain(`[Run #${await runNumber(server.sql, runId)}]`);
    expect(gitlab.notes[0]?.body).toContain('### staging: passed');
    expect(gitlab.requests.filter((r) => r.method === 'PUT')).toHaveLength(1);
    expect(gitlab.statuses.at(-1)).toMatchObject({ sha: 'c'.repeat(40), state: 'success' });
  });

  it("when the merge request's failures have owners, then the edited note mentions the owners of the failures the branch brought alone", async () => {
    // Test 2 also fails on the target branch (the first run of main): its owner is not the branch's to hear of.
    const owners = { 2: ['@acme/payments'], 4: ['@acme/web/checkout', 'carol@example.com'] };
    const runId = await reportRun(api, 'feature-x', '7'.repeat(40), [2, 4], owners);
    expect(await settled(runId)).toMatchObject({ state: 'delivered' });
    expect(gitlab.notes).toHaveLength(1);
    const body = gitlab.notes[0]?.body ?? '';
    expect(body).toContain(`[Run #${await runNumber(server.sql, runId)}]`);
    // Known now (the branch's first run had it), but still the branch's own.
    expect(body).toContain('test 4 (a.spec.ts · p): boom (2) · **brought by this branch**');
    expect(body).toContain('test 2 (a.spec.ts · p): boom · also fails on the target branch');
    // GitLab's mentions: a user, a group and a subgroup by their paths; an address is no mention, so it is shown as code.
    expect(body).toContain('Owners of these failures: @acme/web/checkout `carol@example.com`');
    expect(body).not.toContain('@acme/payments');
    expect(gitlab.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
  });

  it("when every request Proctor made is checked against GitLab's API documentation, then each is a valid call of its operation, with the token", () => {
    expect(gitlab.requests.length).toBeGreaterThanOrEqual(8);
    expect(gitlab.requests.flatMap(problemsWithGitLabRequest)).toEqual([]);
    expect(new Set(gitlab.requests.map((r) => r.headers['private-token']))).toEqual(new Set(['glpat-test']));
    // The project's path goes URL-encoded in one path segment, as GitLab takes it.
    expect(gitlab.requests[0]?.path).toBe(`/api/v4/projects/acme%2Fweb%2Fshop/statuses/${'a'.repeat(40)}`);
    // The checker itself refuses what GitLab would.
    expect(problemsWithGitLabRequest({ ...gitlab.requests[0]!, body: { state: 'sunny' } }).join()).toMatch(/state must be one of/);
    expect(problemsWithGitLabRequest({ ...gitlab.requests[0]!, path: '/api/v4/projects/acme/web/statuses/abc' }).join()).toMatch(/no such operation/);
  });

  it('when GitLab refuses the token, then the delivery fails at once with its answer, and the token is never shown', async () => {
    expect((await api.patch(`/api/notification-destinations/${destinationId}`, { token: 'glpat-refused' })).status).toBe(200);
    const runId = await report('feature-x', 'd'.repeat(40), [4]);
    expect(await settled(runId)).toMatchObject({ state: 'failed', attempts: 1, last_error: 'GitLab 401: 401 Unauthorized' });
    expect((await api.get(`/api/notification-destinations/${destinationId}`)).text).not.toContain('glpat-');
    expect(server.logs.join('')).not.toContain('glpat-');
  });
});

describe('a GitLab destination as it is made', () => {
  it.each([
    [{ type: 'gitlab', token: 't' }, 'body.project: required for a gitlab destination'],
    [{ type: 'gitlab', project: 'acme/shop' }, 'body.token: required for a gitlab destination'],
    [{ type: 'gitlab', project: 'acme/shop', token: 't', url: 'https://example.com/hook' }, 'body.url: a gitlab destination has no url'],
    [{ type: 'gitlab', project: 'acme/shop', token: 't', secret: 's' }, 'body.secret: only a webhook destination has a secret'],
    [{ type: 'gitlab', project: 'not a path', token: 't' }, 'body.project: '],
    [{ type: 'github', repo: 'acme/shop', token: 't', project: 'acme/shop' }, 'body.project: only a gitlab destination has a project'],
  ])('when it is %j, then it is a 400 naming the field, and nothing is made', async (body, message) => {
    const before = (await api.get('/api/notification-destinations')).body.data.destinations.length;
    const refused = await api.post('/api/notification-destinations', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain(message);
    expect((await api.get('/api/notification-destinations')).body.data.destinations).toHaveLength(before);
  });

  it('when its project is given by id, then GitLab is asked by that id', async () => {
    const made = await api.post('/api/notification-destinations', { type: 'gitlab', project: '4242', token: 'glpat-test' });
    expect(made.body.data.destination).toMatchObject({ project: '4242' });
    await report('no-merge-request', 'e'.repeat(40), []);
    await waitUntil(async () => gitlab.statuses.some((s) => s.sha === 'e'.repeat(40) && s.project === '4242'), 20_000, 'the status by project id');
    expect(gitlab.requests.some((r) => r.path === `/api/v4/projects/4242/statuses/${'e'.repeat(40)}`)).toBe(true);
    expect(gitlab.requests.flatMap(problemsWithGitLabRequest)).toEqual([]);
  });
});

// The operator's GitLab token (PROCTOR_GITLAB_TOKEN) acts for every project, so a destination
// without a token of its own reaches with it only the GitLab projects an instance admin bound to
// its project: refused when saved, and at delivery without a request to GitLab.
describe("a GitLab destination with the server's token", () => {
  let operated: TestServer;
  let projectId: number;
  let own: ReturnType<typeof client>;
  const toOperated = (path: string) => gitlab.requests.filter((r) => r.path.includes(path));

  beforeAll(async () => {
    operated = await startTestServer({ env: { PROCTOR_GITLAB_API_URL: gitlab.url, PROCTOR_GITLAB_TOKEN: 'glpat-operator' } });
    const seeded = await seedProjectWithEnvironment(operated.sql, 'staging');
    projectId = seeded.projectId;
    own = client(operated.url, seeded.key);
  });

  afterAll(async () => operated?.close());

  it('when it names a GitLab project not bound to its project, then it is refused when saved with a 400 naming body.project', async () => {
    const refused = await own.post('/api/notification-destinations', { type: 'gitlab', project: 'other-team/production' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(
      /^body\.project: GitLab project other-team\/production is not bound to this project: the server's GitLab token acts only/,
    );
    expect((await own.post('/api/notification-destinations', { type: 'gitlab', project: '999' })).status).toBe(400);
    expect((await own.get('/api/notification-destinations')).body.data.destinations).toEqual([]);
    // A token of the project's own is not limited by bindings.
    const owned = await own.post('/api/notification-destinations', { type: 'gitlab', project: 'other-team/production', token: 'glpat-own' });
    expect(owned.status).toBe(201);
    await own.delete(`/api/notification-destinations/${owned.body.data.destination.id}`);
  });

  it('when one was stored unbound (before bindings), then its delivery fails at once and GitLab gets no request', async () => {
    await operated.sql`
      insert into notification_destinations (project_id, type, gitlab_project, environments, "when", created_at, updated_at)
      values (${projectId}, 'gitlab', 'other-team/production', '{}', 'always', now(), now())`;
    const runId = await reportRun(own, 'main', '5'.repeat(40), []);
    const delivery = await settledDelivery(own, runId);
    expect(delivery).toMatchObject({ state: 'failed', attempts: 1 });
    expect(delivery.last_error).toContain("not sent: GitLab project other-team/production is not bound to this project: the server's GitLab token acts only");
    expect(toOperated('other-team%2Fproduction')).toEqual([]);
    expect(gitlab.statuses.filter((s) => s.sha === '5'.repeat(40))).toEqual([]);
    await operated.sql`delete from notification_destinations where project_id = ${projectId}`;
  });

  it("when its GitLab project is bound, then the status is set there with the server's token", async () => {
    await bindRepository(operated.sql, operated.url, projectId, 'gitlab', 'acme/operated');
    const made = await own.post('/api/notification-destinations', { type: 'gitlab', project: 'ACME/Operated' });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.destination).toMatchObject({ has_secret: false });
    const runId = await reportRun(own, 'main', '6'.repeat(40), []);
    expect(await settledDelivery(own, runId)).toMatchObject({ state: 'delivered' });
    expect(gitlab.statuses.filter((s) => s.sha === '6'.repeat(40))).toMatchObject([{ project: 'ACME/Operated', state: 'success' }]);
    expect(new Set(toOperated('ACME%2FOperated').map((r) => r.headers['private-token']))).toEqual(new Set(['glpat-operator']));
    expect(operated.logs.join('')).not.toContain('glpat-operator');
  });
});
