import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { type LinearStandIn, problemsWithLinearRequest, rootFieldOf, startLinear } from '../helpers/linear.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { reportOutcomes, trackersSettled } from '../helpers/trackers.ts';

// Linear issues across runs of a fixture project, through @linear/sdk over Proctor's pinned
// request, to an API the operator allowed (the stand-in is on loopback): an issue created by the
// rule for a test that turned flaky, though its answer was lost; reopened (a state of the type
// `unstarted`) when it fails again after someone marked it Done; commented on and completed after N
// passes; a failure group linked to an existing issue by identifier. Retries whose answers were
// lost post nothing twice. Every GraphQL document is validated against Linear's schema.

let server: TestServer;
let api: ReturnType<typeof client>;
let linear: LinearStandIn;

const calls = (field: string) => linear.requests.filter((r) => rootFieldOf(parse((r.body as { query: string }).query)) === field);

beforeAll(async () => {
  linear = await startLinear('team-eng', 'ENG');
  server = await startTestServer({ env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1', PROCTOR_LINEAR_API_URL: linear.url } });
  const { projectId, key } = await seedProject(server.sql);
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
});

afterAll(async () => {
  await server?.close();
  await linear?.close();
});

describe('Linear issues', () => {
  it('when the settings name a Linear team, then the API key is write-only and kept when left out', async () => {
    expect((await api.put('/api/tracker-settings', { linear: { team_id: 'team-eng' } })).status).toBe(400);
    expect((await api.put('/api/tracker-settings', { linear: { team_id: 'team-eng', api_key: 'lin_api_test' }, destination_id: 1 })).status).toBe(400);
    expect((await api.put('/api/tracker-settings', { linear: { team_id: 'team-eng', api_key: 'lin_api_test' } })).status).toBe(200);
    const settings = await api.put('/api/tracker-settings', {
      linear: { team_id: 'team-eng' },
      create_for_flaky_tests: true,
      passes_to_resolve: 3,
      close_when_resolved: true,
    });
    expect(settings.status).toBe(200);
    expect(settings.body.data.tracker_settings).toMatchObject({
      tracker: 'linear',
      destination_id: null,
      jira: null,
      linear: { team_id: 'team-eng', has_api_key: true },
    });
    expect(JSON.stringify(settings.body)).not.toContain('lin_api_test');
  });

  it('when a test turns flaky, then one issue is created though its answer was lost', async () => {
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    for (let run = 2; run <= 9; run++) await reportOutcomes(api, 'main', {});
    linear.loseAnswersNext('issueCreate', 1);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);

    expect(linear.issues).toHaveLength(1);
    expect(calls('issueCreate')).toHaveLength(1);
    expect(calls('issues')).toHaveLength(2);
    const issue = linear.issues[0]!;
    expect(issue).toMatchObject({ identifier: 'ENG-1', title: 'Flaky or failing test: test 1', teamId: 'team-eng' });
    expect(issue.description).toContain('Error: test 1 wobbles');
    expect(issue.description).toMatch(/^proctor:link:[0-9a-f-]{36}$/m);
    const links = (await api.get(`/api/tracker-links?test_case_id=${testId(1)}`)).body.data.tracker_links;
    expect(links).toMatchObject([
      { origin: 'rule', tracker: 'linear', issue_key: 'ENG-1', issue_state: 'open', issue_url: 'https://linear.app/acme/issue/ENG-1/' },
    ]);
  }, 120_000);

  it('when someone marks it Done and the test is flaky again, then it is reopened with one comment; three passes later commented on and completed', async () => {
    linear.closeIssue('ENG-1');
    linear.loseAnswersNext('commentCreate', 1);
    await reportOutcomes(api, 'main', { 1: 'flaky' });
    await trackersSettled(server);
    const issue = linear.issues[0]!;
    expect(linear.typeOf(issue)).toBe('unstarted');
    expect(calls('commentCreate')).toHaveLength(1);
    expect(issue.comments.map((c) => c.body.split('\n')[0])).toEqual([
      expect.stringMatching(/^This test failed again in \[run #\d+\].*: Proctor reopens the issue\.$/),
    ]);

    linear.loseAnswersNext('issueUpdate', 1);
    for (let run = 1; run <= 3; run++) await reportOutcomes(api, 'main', {});
    await trackersSettled(server);
    expect(linear.typeOf(issue)).toBe('completed');
    expect(issue.comments).toHaveLength(2);
    expect(issue.comments[1]?.body).toMatch(/^This test passed the last 3 runs of `main` in a row/);
    expect((await api.get(`/api/tracker-links?test_case_id=${testId(1)}`)).body.data.tracker_links[0]).toMatchObject({
      issue_state: 'closed',
      last_action: { kind: 'passing', state: 'delivered', last_error: null },
    });
  }, 90_000);

  it('when a failure group is linked to an existing issue by identifier, then its state is read, and a failure reopens it', async () => {
    await reportOutcomes(api, 'feature-y', { 2: 'failed' });
    await trackersSettled(server);
    linear.fileIssue('Checkout total', 'completed');
    expect((await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: '#2' })).status).toBe(400);
    const linked = await api.post('/api/tracker-links', { failure_group_id: 'fg-2', issue: 'https://linear.app/acme/issue/ENG-2/checkout-total' });
    expect(linked.status).toBe(201);
    await trackersSettled(server);
    expect((await api.get('/api/failure-groups/fg-2')).body.data.failure_group.issue).toMatchObject({ tracker: 'linear', key: 'ENG-2', state: 'closed' });

    await reportOutcomes(api, 'main', { 2: 'failed' });
    await trackersSettled(server);
    expect(linear.typeOf(linear.issues[1]!)).toBe('unstarted');
    expect(linear.issues[1]?.comments).toHaveLength(1);
    expect(linear.issues).toHaveLength(2);
  }, 60_000);

  it("when every request Proctor made is checked against Linear's schema, then each is a valid document with valid variables, with the API key", () => {
    expect(linear.requests.length).toBeGreaterThan(15);
    expect(linear.requests.flatMap(problemsWithLinearRequest)).toEqual([]);
    expect(new Set(linear.requests.map((r) => r.headers.authorization))).toEqual(new Set(['lin_api_test']));
    const create = calls('issueCreate')[0]!;
    const body = create.body as { query: string; variables: { input: Record<string, unknown> } };
    expect(problemsWithLinearRequest({ ...create, body: { ...body, variables: { input: { ...body.variables.input, teamKey: 'ENG' } } } }).join()).toMatch(
      /teamKey/,
    );
    expect(problemsWithLinearRequest({ ...create, body: { query: '{ issues { nodes { slug } } }' } }).join()).toMatch(/Cannot query field "slug"/);
  });
});
