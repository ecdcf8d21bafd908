import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { type JiraStandIn, problemsWithJiraRequest, startJira } from '../helpers/jira.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { reportOutcomes, trackersSettled } from '../helpers/trackers.ts';

// Jira issues across runs of a fixture project, through jira.js on a site the operator allowed
// (the stand-in is on loopback): an issue created by the rule for a test that turned flaky, though
// its answer was lost; reopened through the workflow's transition to a To Do status when it fails
// again after someone moved it to Done; commented on and closed (the transition to Done) after N
// passes; a failure group linked to an existing issue by key. Retries whose answers were lost post
// nothing twice. Every request is checked against Atlassian's OpenAPI description.

let server: TestServer;
let api: ReturnType<typeof client>;
let jira: JiraStandIn;

beforeAll(async () => {
  jira = await startJira('OPS');
  server = await startTestServer({ env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
  const { projectId, key } = await seedProject(server.sql);
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
});

afterAll(async () => {
  await server?.close();
  await jira?.close();
});

describe('Jira issues', () => {
  it('when the settings name a Jira site, then the token is write-only, and a site the operator did not allow is refused', async () => {
    const refused = await api.put('/api/tracker-settings', { jira: { url: 'http://10.1.2.3', project_key: 'OPS', email: 'ci@acme.test', api_token: 't' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^body\.jira\.url: .*PROCTOR_NOTIFY_ALLOW_HOSTS/);
    const noToken = await api.put('/api/tracker-settings', { jira: { url: jira.url, project_key: 'OPS', email: 'ci@acme.test' } });
    expect(noToken.status).toBe(400);
    const settings = await api.put('/api/tracker-settings', {
      jira: { url: jira.url, project_key: 'OPS', email: 'ci@acme.test', api_token: 'atlassian-token' },
      create_for_flaky_tests: true,
      passes_to_resolve: 3,
      close_when_resolved: true,
    });
    expect(settings.status).toBe(200);
    expect(settings.body.data.tracker_settings).toMatchObject({
      tracker: 'jira',
      destination_id: null,
      jira: { url: jira.url, project_key: 'OPS', issue_type: 'Bug', email: 'ci@acme.test', has_token: true },
      linear: null,
    });
    expect(JSON.stringify(settings.body)).not.toContain('atlassian-token');
    // The stored token is not carried to another site (nor kept for another account).
    const elsewhere = await api.put('/api/tracker-settings', {
      ...settings.body.data.tracker_settings,
      updated_at: undefined,
      jira: { url: 'http://127.0.0.1:1', project_key: 'OPS', email: 'ci@acme.test' },
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.message).toMatch(/^body\.jira\.api_token: required/);
    // The answer sent back as it is keeps the token.
    const again = await api.put('/api/tracker-settings', { ...settings.body.data.tracker_settings, updated_at: undefined });
    expect(again.body.data.tracker_settings.jira).toMatchObject({ has_token: true });
  });

  it('when a test turns flaky, then one issue is created though its answer was lost, labelled with its marker', async () => {
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    for (let run = 2; run <= 9; run++) await reportOutcomes(api, 'main', {});
    jira.loseAnswersNext('POST', /\/issue$/, 1);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);

    expect(jira.issues).toHaveLength(1);
    // The create was sent, its answer lost; the retry searched for its marker and found it.
    expect(jira.requests.filter((r) => r.method === 'POST' && r.path === '/rest/api/2/issue')).toHaveLength(1);
    expect(jira.requests.filter((r) => r.path === '/rest/api/2/search/jql')).toHaveLength(2);
    const issue = jira.issues[0]!;
    expect(issue).toMatchObject({ key: 'OPS-1', summary: 'Flaky or failing test: test 1', category: 'new' });
    expect(issue.labels).toEqual(['proctor', expect.stringMatching(/^proctor-[0-9a-f-]{36}$/)]);
    expect(issue.description).toContain('{noformat}\nError: test 1 wobbles');
    expect(issue.description).toMatch(/^\|\| Run \|\| Environment \|\|/m);
    expect(issue.description).not.toContain('<!--');
    const links = (await api.get(`/api/tracker-links?test_case_id=${testId(1)}`)).body.data.tracker_links;
    expect(links).toMatchObject([{ origin: 'rule', tracker: 'jira', issue_key: 'OPS-1', issue_state: 'open', issue_url: `${jira.url}/browse/OPS-1` }]);
  }, 120_000);

  it('when someone moves it to Done and the test is flaky again, then it is reopened through a transition with one comment; three passes later commented on and closed', async () => {
    jira.closeIssue('OPS-1');
    jira.loseAnswersNext('POST', /\/comment$/, 1);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);
    const issue = jira.issues[0]!;
    expect(issue.category).toBe('new');
    expect(jira.requests.filter((r) => r.method === 'POST' && r.path === '/rest/api/2/issue/OPS-1/comment')).toHaveLength(1);
    expect(issue.comments.map((c) => c.body.split('\n')[0])).toEqual([
      expect.stringMatching(/^This test failed again in \[run #\d+\|.*: Proctor reopens the issue\.$/),
    ]);

    jira.loseAnswersNext('POST', /\/transitions$/, 1);
    for (let run = 1; run <= 3; run++) await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(issue.category).toBe('done');
    // The transition to Done went through, its answer lost: the retry found the issue closed and sent none again.
    expect(jira.requests.filter((r) => r.method === 'POST' && r.path === '/rest/api/2/issue/OPS-1/transitions').map((r) => r.body)).toEqual([
      { transition: { id: '41' } },
      { transition: { id: '31' } },
    ]);
    expect(issue.comments).toHaveLength(2);
    expect(issue.comments[1]?.body).toMatch(/^This test passed the last 3 runs of \{\{main\}\} in a row/);
    expect((await api.get(`/api/tracker-links?test_case_id=${testId(1)}`)).body.data.tracker_links[0]).toMatchObject({
      issue_state: 'closed',
      last_action: { kind: 'passing', state: 'delivered', attempts: 2, last_error: null },
    });
  }, 90_000);

  it('when a failure group is linked to an existing issue by key, then its state is read, and a failure reopens it', async () => {
    await reportOutcomes(api, 'feature-y', { 2: 'failed' });
    await trackersSettled(server);
    jira.fileIssue('Checkout total', 'done');
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: 'ENG-2' })).status).toBe(400);
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: 'https://elsewhere.example/browse/OPS-2' })).status).toBe(400);
    const linked = await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: `${jira.url}/browse/OPS-2` });
    expect(linked.status).toBe(201);
    await trackersSettled(server);
    expect((await api.get('/api/failure-groups/fg-2')).body.data.failure_group.issue).toMatchObject({ tracker: 'jira', key: 'OPS-2', state: 'closed' });

    await reportOutcomes(api, 'main', { 2: 'failed' });
    await trackersSettled(server);
    expect(jira.issues[1]?.category).toBe('new');
    expect(jira.issues[1]?.comments).toHaveLength(1);
    expect(jira.issues).toHaveLength(2);
  }, 60_000);

  it('when the settings name a Data Center with a personal access token, then an issue is created through its search and the token as Bearer', async () => {
    const before = jira.requests.length;
    const settings = await api.put('/api/tracker-settings', { jira: { url: jira.url, project_key: 'OPS', issue_type: 'Task', api_token: 'dc-pat' } });
    expect(settings.body.data.tracker_settings.jira).toMatchObject({ email: null, issue_type: 'Task', has_token: true });
    expect((await api.post('/api/tracker-links', { test_case_id: testId(4) })).status).toBe(201);
    await trackersSettled(server);
    expect(jira.issues[2]).toMatchObject({ key: 'OPS-3', summary: 'Flaky or failing test: test 4' });
    const sent = jira.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /rest/api/2/search', 'POST /rest/api/2/issue']);
    expect((sent[1]?.body as { fields: { issuetype: unknown } }).fields.issuetype).toEqual({ name: 'Task' });
    expect(new Set(sent.map((r) => r.headers.authorization))).toEqual(new Set(['Bearer dc-pat']));
    expect(sent.flatMap(problemsWithJiraRequest)).toEqual([]);
  }, 60_000);

  it("when every request Proctor made is checked against Jira's OpenAPI description, then each is a documented call, with the account's Basic credentials", () => {
    expect(jira.requests.length).toBeGreaterThan(15);
    expect(jira.requests.flatMap(problemsWithJiraRequest)).toEqual([]);
    const basic = `Basic ${Buffer.from('ci@acme.test:atlassian-token').toString('base64')}`;
    expect(new Set(jira.requests.map((r) => r.headers.authorization))).toEqual(new Set([basic, 'Bearer dc-pat']));
    const create = jira.requests.find((r) => r.method === 'POST' && r.path === '/rest/api/2/issue')!;
    expect(problemsWithJiraRequest({ ...create, body: { fields: 'OPS' } }).join()).toMatch(/must be object/);
    expect(problemsWithJiraRequest({ ...create, query: new URLSearchParams({ notify: 'no' }) }).join()).toMatch(/query parameter "notify"/);
  });
});
