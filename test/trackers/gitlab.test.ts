import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitLabStandIn, problemsWithGitLabRequest, startGitLab } from '../helpers/gitlab.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { reportOutcomes, trackersSettled } from '../helpers/trackers.ts';

// GitLab issues across runs of a fixture project: an issue created by the rule for a test that
// turned flaky (once its class over the flakiness window says so, not at its first flaky run),
// reopened when it is flaky again after someone closed it, commented on and closed after N passes;
// an issue linked to a failure group by number; retries whose answers were lost post nothing
// twice. Every request is checked against GitLab's API documentation.

let server: TestServer;
let api: ReturnType<typeof client>;
let gitlab: GitLabStandIn;

beforeAll(async () => {
  gitlab = await startGitLab();
  server = await startTestServer({ env: { PROCTOR_GITLAB_API_URL: gitlab.url } });
  const { projectId, key } = await seedProject(server.sql);
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
  const destination = (await api.post('/api/notification-destinations', { type: 'gitlab', project: 'acme/shop', token: 'glpat-test' })).body.data.destination;
  const settings = await api.put('/api/tracker-settings', {
    destination_id: destination.id,
    create_for_flaky_tests: true,
    passes_to_resolve: 3,
    close_when_resolved: true,
  });
  expect(settings.body.data.tracker_settings).toMatchObject({ when_closed_failing: 'reopen', default_branch: 'main' });
});

afterAll(async () => {
  await server?.close();
  await gitlab?.close();
});

describe('GitLab issues', () => {
  it('when a test is flaky in its first runs, then no issue is filed until its class over the window is flaky; then one is, though its answer was lost', async () => {
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    for (let run = 2; run <= 9; run++) await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(gitlab.issues).toEqual([]);
    gitlab.loseAnswersNext('POST', /\/issues$/, 1);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);

    expect(gitlab.issues).toHaveLength(1);
    expect(gitlab.issues[0]).toMatchObject({ title: 'Flaky or failing test: test 1', labels: ['proctor'], state: 'opened' });
    expect(gitlab.issues[0]?.description).toContain('Error: test 1 wobbles');
    expect(gitlab.issues[0]?.description).toMatch(/\| main \| flaky \|[\s\S]*\| main \| passed \|/);
    const links = (await api.get(`/api/tracker-links?test_case_id=${testId(1)}`)).body.data.tracker_links;
    expect(links).toMatchObject([
      { origin: 'rule', tracker: 'gitlab', issue_key: '1', issue_state: 'open', issue_url: 'https://gitlab.example/acme/shop/-/issues/1' },
    ]);
  }, 120_000);

  it('when someone closes the issue and the test is flaky again, then it is reopened with one note; three passes later it is noted and closed', async () => {
    gitlab.closeIssue(1);
    gitlab.loseAnswersNext('PUT', /\/issues\/1$/, 1);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);
    expect(gitlab.issues[0]?.state).toBe('opened');
    expect(gitlab.issues[0]?.notes.map((n) => n.body.split('\n')[0])).toEqual([
      expect.stringMatching(/^This test failed again in \[run #\d+\].*: Proctor reopens the issue\.$/),
    ]);

    for (let run = 1; run <= 3; run++) await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(gitlab.issues[0]?.state).toBe('closed');
    expect(gitlab.issues[0]?.notes).toHaveLength(2);
    expect(gitlab.issues[0]?.notes[1]?.body).toMatch(/^This test passed the last 3 runs of `main` in a row/);
  }, 90_000);

  it('when a failure group is linked to an existing issue by number, then its state is read, and its failures move it', async () => {
    await reportOutcomes(api, 'feature-y', { 2: 'failed' });
    await trackersSettled(server);
    expect(gitlab.issues).toHaveLength(1);
    // Filed by a person, and closed.
    gitlab.issues.push({
      iid: 2,
      title: 'Checkout total',
      description: 'seen by QA',
      state: 'closed',
      closed_at: new Date().toISOString(),
      labels: [],
      notes: [],
    });
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: 'https://gitlab.example/acme/other/-/issues/2' })).status).toBe(400);
    const linked = await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: '#2' });
    expect(linked.status).toBe(201);
    await trackersSettled(server);
    expect((await api.get('/api/failure-groups/fg-2')).body.data.failure_group.issue).toMatchObject({ tracker: 'gitlab', key: '2', state: 'closed' });

    await reportOutcomes(api, 'main', { 2: 'failed' });
    await trackersSettled(server);
    expect(gitlab.issues[1]?.state).toBe('opened');
    expect(gitlab.issues[1]?.notes).toHaveLength(1);
    expect((await api.get('/api/failure-groups')).body.data.failure_groups.find((g: { id: string }) => g.id === 'fg-2').issue).toMatchObject({ state: 'open' });
  }, 60_000);

  it("when every request Proctor made is checked against GitLab's documentation, then each is a documented call, with the token", () => {
    const onIssues = gitlab.requests.filter((r) => r.path.includes('/issues'));
    expect(onIssues.length).toBeGreaterThan(10);
    expect(gitlab.requests.flatMap(problemsWithGitLabRequest)).toEqual([]);
    expect(new Set(onIssues.map((r) => r.headers['private-token']))).toEqual(new Set(['glpat-test']));
    const edit = onIssues.find((r) => r.method === 'PUT')!;
    expect(problemsWithGitLabRequest({ ...edit, body: { state_event: 'resolve' } }).join()).toMatch(/state_event must be one of close, reopen/);
  });
});
