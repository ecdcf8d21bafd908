import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { reportOutcomes, trackersSettled } from '../helpers/trackers.ts';

// The rule that files an issue for a test turned broken on the default branch: one that failed its
// last N runs there in a row (N = broken_after_failures), neither passing nor flaky between. Runs
// of other branches neither count nor break the streak; one issue per streak, though the answer
// to the create was lost. Every request is checked against GitHub's OpenAPI description.

let server: TestServer;
let api: ReturnType<typeof client>;
let github: GitHubStandIn;
let projectId: number;

const linksOf = async (n: 1 | 2 | 4) => (await api.get(`/api/tracker-links?test_case_id=${testId(n)}`)).body.data.tracker_links;
const creates = () => github.requests.filter((r) => r.method === 'POST' && r.path === '/repos/acme/shop/issues');

beforeAll(async () => {
  github = await startGitHub();
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url } });
  const seeded = await seedProject(server.sql);
  projectId = seeded.projectId;
  const key = seeded.key;
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
  const destination = (await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).body.data.destination;
  expect((await api.put('/api/tracker-settings', { destination_id: destination.id, create_for_broken_tests: true, broken_after_failures: 1 })).status).toBe(
    400,
  );
  const settings = await api.put('/api/tracker-settings', { destination_id: destination.id, create_for_broken_tests: true });
  expect(settings.body.data.tracker_settings).toMatchObject({ create_for_broken_tests: true, broken_after_failures: 3, create_for_flaky_tests: false });
});

afterAll(async () => {
  await server?.close();
  await github?.close();
});

describe('the broken-test rule', () => {
  it('when a test fails two default-branch runs, is flaky, then fails two more, then no issue is filed: no three failures in a row', async () => {
    await reportOutcomes(api, 'main', { 4: 'failed' });
    await reportOutcomes(api, 'main', { 4: 'failed' });
    await reportOutcomes(api, 'main', { 4: 'flaky' });
    await reportOutcomes(api, 'main', { 4: 'failed' });
    await reportOutcomes(api, 'feature-x', { 4: 'passed' });
    await reportOutcomes(api, 'main', { 4: 'failed' });
    await trackersSettled(server);
    expect(github.issues).toEqual([]);
    expect(await linksOf(4)).toEqual([]);
  }, 120_000);

  it('when its third failure in a row on the default branch comes (a passing feature-branch run between), then one issue is filed by the rule, though its answer was lost', async () => {
    github.loseAnswersNext('POST', /^\/repos\/acme\/shop\/issues$/, 1);
    await reportOutcomes(api, 'main', { 4: 'failed', 2: 'flaky' });
    await trackersSettled(server);
    expect(github.issues).toHaveLength(1);
    expect(creates()).toHaveLength(1);
    expect(github.issues[0]?.title).toBe('Flaky or failing test: test 4');
    expect(github.issues[0]?.body).toContain('Error: test 4 broke');
    expect(github.issues[0]?.body).toMatch(/\| main \| failed \|[\s\S]*\| main \| flaky \|/);
    expect(await linksOf(4)).toMatchObject([{ origin: 'rule', tracker: 'github', issue_key: String(github.issues[0]?.number), issue_state: 'open' }]);
    // A flaky test is not broken.
    expect(await linksOf(2)).toEqual([]);
  }, 60_000);

  it('when it keeps failing, then no second issue is filed; a new streak after a pass files none while the link stays', async () => {
    await reportOutcomes(api, 'main', { 4: 'failed' });
    await reportOutcomes(api, 'main', {});
    for (let run = 1; run <= 3; run++) await reportOutcomes(api, 'main', { 4: 'failed' });
    await trackersSettled(server);
    expect(github.issues).toHaveLength(1);
    expect(creates()).toHaveLength(1);
  }, 120_000);

  it('when the rule is set to two failures and another test fails twice in a row, then it gets its own issue', async () => {
    const settings = (await api.get('/api/tracker-settings')).body.data.tracker_settings;
    await api.put('/api/tracker-settings', { ...settings, updated_at: undefined, broken_after_failures: 2 });
    await reportOutcomes(api, 'main', { 1: 'failed' });
    await trackersSettled(server);
    expect(github.issues).toHaveLength(1);
    await reportOutcomes(api, 'main', { 1: 'failed' });
    await trackersSettled(server);
    expect(github.issues.map((i) => i.title)).toEqual(['Flaky or failing test: test 4', 'Flaky or failing test: test 1']);
    expect(await linksOf(1)).toMatchObject([{ origin: 'rule', issue_state: 'open' }]);
  }, 60_000);

  it("when the environment's digest is read, then it lists the project's open issues, those of the tests it names first, and not a closed one", async () => {
    const open = github.fileIssue('Group 4 flickers');
    const closed = github.fileIssue('Group 1 was fixed', 'closed');
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-4', issue: String(open.number) })).status).toBe(201);
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-1', issue: String(closed.number) })).status).toBe(201);
    await trackersSettled(server);
    const environments = (await api.get('/api/environments')).body.data.environments as { id: number; slug: string }[];
    const staging = environments.find((env) => env.slug === 'staging')!;
    const digest = (await api.get(`/api/digest?environment_id=${staging.id}&period=day`)).body.data.digest;
    expect(digest.most_failing.map((t: { test_case_id: string }) => t.test_case_id)).toEqual(expect.arrayContaining([testId(1), testId(4)]));
    const [issue4, issue1] = github.issues;
    expect(digest.open_issues_total).toBe(3);
    expect(digest.open_issues).toEqual([
      {
        subject_kind: 'test',
        subject_id: testId(1),
        title: 'test 1',
        tracker: 'github',
        issue_key: String(issue1?.number),
        issue_url: `https://github.com/acme/shop/issues/${issue1?.number}`,
      },
      {
        subject_kind: 'test',
        subject_id: testId(4),
        title: 'test 4',
        tracker: 'github',
        issue_key: String(issue4?.number),
        issue_url: `https://github.com/acme/shop/issues/${issue4?.number}`,
      },
      {
        subject_kind: 'failure_group',
        subject_id: 'fg-4',
        title: (await api.get('/api/failure-groups/fg-4')).body.data.failure_group.title,
        tracker: 'github',
        issue_key: String(open.number),
        issue_url: `https://github.com/acme/shop/issues/${open.number}`,
      },
    ]);

    // The digest page shows them too, each subject and issue a link.
    const { userId } = await seedUser(server.sql, [projectId], { role: 'viewer' });
    const signIn = await fetch(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, server.clock.now)}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const page = await (await fetch(`${server.url}/projects/${projectId}/digest?environment_id=${staging.id}&period=day`, { headers: { cookie } })).text();
    const section = /<h2 id="digest-open-issues">.*?<\/section>/s.exec(page)?.[0] ?? '';
    expect(section).toContain('Open issues (3)</h2>');
    expect(section).toContain(
      `<li><a href="/projects/${projectId}/failure-groups/fg-4">${digest.open_issues[2].title.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')}</a>: open, <a href="https://github.com/acme/shop/issues/${open.number}">GitHub #${open.number}</a></li>`,
    );
    expect(section).toContain(`<a href="/projects/${projectId}/tests/${testId(1)}">test 1</a>`);
  }, 60_000);

  it("when every request Proctor made is checked against GitHub's published OpenAPI description, then each is a valid call of its operation", () => {
    expect(github.requests.length).toBeGreaterThan(5);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  });
});
