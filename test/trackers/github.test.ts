import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { githubTrackedProject, reportOutcomes, trackersSettled } from '../helpers/trackers.ts';

// GitHub Issues across runs of a fixture project: an issue created by the rule for a failure group
// new on the default branch, reopened when it fails again after someone closed it, commented on and
// closed after it passed N runs; an existing issue linked by URL, commented on once per closing; and
// retries whose answers were lost post nothing twice. Every request is checked against GitHub's
// published OpenAPI description.

let server: TestServer;
let api: ReturnType<typeof client>;
let github: GitHubStandIn;
let projectId: number;

const linkOfGroup = async (id: string) => (await api.get(`/api/failure-groups/${id}`)).body.data.failure_group.issue;
const commentsOn = (issue: number) => github.comments.filter((c) => c.issue === issue);

beforeAll(async () => {
  github = await startGitHub();
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url } });
  const tracked = await githubTrackedProject(server);
  api = tracked.api;
  projectId = tracked.projectId;
});

afterAll(async () => {
  await server?.close();
  await github?.close();
});

describe('GitHub Issues', () => {
  it('when a failure group is new on the default branch and the create answer is lost once, then one issue is filed with its error, history, runs and a link back', async () => {
    github.loseAnswersNext('POST', /^\/repos\/acme\/shop\/issues$/, 1);
    const runId = await reportOutcomes(api, 'main', { 2: 'failed' });
    await trackersSettled(server);

    expect(github.issues).toHaveLength(1);
    const [issue] = github.issues;
    expect(issue?.title).toBe('Failing: ' + (await api.get('/api/failure-groups/fg-2')).body.data.failure_group.title);
    expect(issue?.labels).toEqual(['proctor']);
    expect(issue?.body).toContain('Error: test 2 broke');
    expect(issue?.body).toContain(`/projects/${projectId}/failure-groups/fg-2)`);
    expect(issue?.body).toContain(`/projects/${projectId}/runs/${runId})`);
    expect(issue?.body).toContain('- test 2 (`a.spec.ts`)');
    expect(issue?.body).toMatch(/<!-- proctor:link:[0-9a-f-]{36} -->/);
    // The lost answer was retried: the retry found the issue by its marker.
    expect(github.requests.filter((r) => r.method === 'POST' && r.path === '/repos/acme/shop/issues')).toHaveLength(1);
    expect(await linkOfGroup('fg-2')).toMatchObject({
      tracker: 'github',
      key: String(issue?.number),
      state: 'open',
      url: `https://github.com/acme/shop/issues/${issue?.number}`,
    });
  }, 60_000);

  it('when a failure group is new on another branch only, then no issue is filed', async () => {
    await reportOutcomes(api, 'feature-x', { 4: 'failed' });
    await trackersSettled(server);
    expect(github.issues).toHaveLength(1);
    expect(await linkOfGroup('fg-4')).toBeNull();
  }, 60_000);

  it('when someone closes the issue and the group fails again on the default branch, then it is reopened with one comment, though that answer was lost once', async () => {
    const number = github.issues[0]!.number;
    github.closeIssue(number);
    github.loseAnswersNext('POST', new RegExp(`/issues/${number}/comments$`), 1);
    await reportOutcomes(api, 'main', { 2: 'failed' });
    await trackersSettled(server);

    expect(github.issues[0]?.state).toBe('open');
    expect(commentsOn(number)).toHaveLength(1);
    expect(commentsOn(number)[0]?.body).toMatch(/^This failure failed again in \[run #\d+\]\(.*\) of `main`: Proctor reopens the issue/);
    expect(await linkOfGroup('fg-2')).toMatchObject({ state: 'open' });
  }, 60_000);

  it('when the group fails while its issue is open, then nothing is posted', async () => {
    const before = github.requests.filter((r) => r.method !== 'GET').length;
    await reportOutcomes(api, 'main', { 2: 'failed' });
    await trackersSettled(server);
    const posted = github.requests.filter((r) => r.method !== 'GET').slice(before);
    // The run's own commit status, and nothing on the issue.
    expect(posted.map((r) => r.path)).toEqual(['/repos/acme/shop/statuses/' + 'a'.repeat(40)]);
  }, 60_000);

  it('when its tests pass two runs in a row on the default branch, then the issue is commented on and closed, once', async () => {
    const number = github.issues[0]!.number;
    await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(commentsOn(number)).toHaveLength(1);
    await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(commentsOn(number)).toHaveLength(2);
    expect(commentsOn(number)[1]?.body).toMatch(/^This failure's tests passed the last 2 runs of `main` in a row/);
    expect(github.issues[0]?.state).toBe('closed');
    expect(await linkOfGroup('fg-2')).toMatchObject({ state: 'closed' });
    // A third pass says nothing more.
    await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(commentsOn(number)).toHaveLength(2);
  }, 90_000);

  it('when an existing issue is linked to a test by URL and the project comments instead of reopening, then a closed issue gets one comment per closing', async () => {
    const existing = github.fileIssue('Test 1 is slow to start');
    expect((await api.post('/api/tracker-links', { test_case_id: testId(1), issue: 'https://github.com/acme/other/issues/1' })).status).toBe(400);
    const linked = await api.post('/api/tracker-links', { test_case_id: testId(1), issue: `https://github.com/acme/shop/issues/${existing.number}` });
    expect(linked.status).toBe(201);
    expect(linked.body.data.tracker_link).toMatchObject({ origin: 'linked', issue_key: String(existing.number), subject_kind: 'test' });
    expect((await api.post('/api/tracker-links', { test_case_id: testId(1), issue: String(existing.number) })).status).toBe(409);
    await trackersSettled(server);
    const read = (await api.get(`/api/tracker-links/${linked.body.data.tracker_link.id}`)).body.data.tracker_link;
    expect(read).toMatchObject({ issue_state: 'open', last_action: { kind: 'refresh', state: 'delivered' } });

    const settings = (await api.get('/api/tracker-settings')).body.data.tracker_settings;
    await api.put('/api/tracker-settings', { ...settings, updated_at: undefined, when_closed_failing: 'comment', create_for_new_groups: false });
    github.closeIssue(existing.number);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);
    expect(existing.state).toBe('closed');
    expect(commentsOn(existing.number)).toHaveLength(1);
    expect(commentsOn(existing.number)[0]?.body).toMatch(/^This test failed again in \[run #\d+\]\(.*\) of `main`, while the issue is closed/);
    // Reopened and closed again by a person: the next failure is told once more.
    existing.state = 'open';
    github.closeIssue(existing.number);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);
    expect(commentsOn(existing.number)).toHaveLength(2);
  }, 90_000);

  it("when an issue is created for a test from Proctor, then it tells its recent history; the test and group pages show their issues' states", async () => {
    const made = await api.post('/api/tracker-links', { test_case_id: testId(4) });
    expect(made.status).toBe(201);
    expect(made.body.data.tracker_link).toMatchObject({ origin: 'created', issue_key: null });
    await trackersSettled(server);
    const issue = github.issues.at(-1);
    expect(issue?.title).toBe('Flaky or failing test: test 4');
    expect(issue?.body).toContain('### Recent history');
    expect(issue?.body).toContain('| feature-x | failed |');
    expect(issue?.body).toContain(`/projects/${projectId}/tests/${testId(4)})`);
    const listed = (await api.get(`/api/tracker-links?test_case_id=${testId(4)}`)).body.data.tracker_links;
    expect(listed).toMatchObject([{ issue_key: String(issue?.number), issue_state: 'open' }]);

    const { userId } = await seedUser(server.sql, [projectId], { role: 'member' });
    const signIn = await fetch(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, server.clock.now)}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const page = async (path: string) => (await fetch(`${server.url}/projects/${projectId}${path}`, { headers: { cookie } })).text();
    const testPage = await page(`/tests/${testId(4)}`);
    expect(testPage).toContain(
      `<a href="https://github.com/acme/shop/issues/${issue?.number}">GitHub #${issue?.number}</a> · <strong class="issue-open">open</strong>`,
    );
    const groupPage = await page('/failure-groups/fg-2');
    expect(groupPage).toContain(`GitHub #${github.issues[0]?.number}</a> · <strong class="issue-closed">closed</strong>`);
    // A test without an issue offers to create one, or to link one.
    const unlinked = await page(`/tests/${testId(2)}`);
    expect(unlinked).toContain('data-api="POST /api/tracker-links"');
    expect(unlinked).toContain('Link an existing issue');
  }, 60_000);

  it('when the project does not close resolved issues and a group passes two runs, then its issue is commented on once and left open', async () => {
    const settings = (await api.get('/api/tracker-settings')).body.data.tracker_settings;
    expect((await api.put('/api/tracker-settings', { ...settings, updated_at: undefined, close_when_resolved: false })).status).toBe(200);
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-4' })).status).toBe(201);
    await trackersSettled(server);
    const number = Number((await linkOfGroup('fg-4')).key);
    const changes = () => github.requests.filter((r) => r.method === 'PATCH' && r.path === `/repos/acme/shop/issues/${number}`);
    for (let run = 0; run < 3; run++) {
      await reportOutcomes(api, 'main', {});
      await trackersSettled(server);
    }
    expect(commentsOn(number)).toHaveLength(1);
    expect(commentsOn(number)[0]?.body).toMatch(/^This failure's tests passed the last 2 runs of `main` in a row/);
    expect(changes()).toEqual([]);
    expect(github.issues.find((i) => i.number === number)?.state).toBe('open');
    expect(await linkOfGroup('fg-4')).toMatchObject({ state: 'open' });
  }, 90_000);

  it("when every request Proctor made is checked against GitHub's published OpenAPI description, then each is a valid call of its operation", () => {
    const onIssues = github.requests.filter((r) => r.path.includes('/issues'));
    expect(onIssues.length).toBeGreaterThan(15);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
    // The checker refuses an issue state GitHub does not have.
    const patch = onIssues.find((r) => r.method === 'PATCH')!;
    expect(problemsWithGitHubRequest({ ...patch, body: { state: 'resolved' } }).join()).toMatch(/must be equal to one of the allowed values/);
  });
});
