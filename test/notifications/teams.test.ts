import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabelledFailure, RunStory } from '../../server/src/notifications/compose.ts';
import { TEAMS_FAILURE_LIMIT, teamsMessage, teamsText } from '../../server/src/notifications/messages.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { runNumber, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';
import { cardProblems, startTeamsWorkflow, type TeamsWorkflow, workflowsRequestProblems } from '../helpers/teams.ts';

// A Microsoft Teams destination posts a run's ending to a Teams Workflows webhook as an Adaptive
// Card (issue 58, point 3): what Slack's message says, labels and links alike, every card checked
// against Microsoft's published Adaptive Card schema 1.5 and every request against the shape the
// Workflows trigger takes, by a local stand-in (test/helpers/teams.ts). What people typed is
// escaped: a TextBlock reads markdown and {{DATE(…)}} functions.

let server: TestServer;
let api: ReturnType<typeof client>;
let teams: TeamsWorkflow;
let teamsId: number;
const clock = new TestClock('live');
// What people typed, as a TextBlock would take it for markdown and a date function.
const PROJECT = 'Shop *bold* [x](https://evil.example) {{DATE(2017-02-14T06:08:39Z, SHORT)}}';
const ESCAPED_PROJECT = 'Shop \\*bold\\* \\[x\\]\\(https://evil.example\\) \\{\\{DATE\\(2017-02-14T06:08:39Z, SHORT\\)\\}\\}';
const PIPELINE = 'https://ci.example.com/acme/shop/jobs/7?a=1&b=2';

type Outcome = 'passed' | 'failed' | 'flaky';

/** A report-only run of `branch`: each test's outcome, failures in group `fg-<test>`, its CI job `ciJob` when given. */
async function report(tests: [number, Outcome][], options: { branch?: string; ciJob?: string; title?: (n: number) => string } = {}): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: options.branch ?? 'main' })).body.data.test_run.id as number;
  if (options.ciJob) await server.sql`update test_runs set metadata = ${server.sql.json({ ci_build_url: options.ciJob })} where id = ${runId}`;
  const title = options.title ?? ((n: number) => `test ${n}`);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map(([n]) => listedTest(testId(n), { title: title(n) })), complete: false });
  const results = tests.flatMap(([n, outcome]) => {
    if (outcome === 'passed') return [attempt(testId(n))];
    const first = attempt(testId(n), { final: null, status: 'failed', error_message: `Error: test ${n} broke` });
    const last = attempt(testId(n), {
      retry: 1,
      final: outcome === 'flaky' ? 'flaky' : 'unexpected',
      status: outcome === 'flaky' ? 'passed' : 'failed',
      error_message: outcome === 'flaky' ? null : `Error: test ${n} broke`,
      finalError: `Error: test ${n} broke`,
      failureGroupId: outcome === 'flaky' ? null : `fg-${n}`,
    });
    return [first, last];
  });
  expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results })).status).toBe(200);
  for (const [n, outcome] of tests) {
    if (outcome === 'failed') await api.post(`/api/failure-groups/fg-${n}/members`, { test_run_id: runId, test_case_id: testId(n) });
  }
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: tests.some(([, o]) => o === 'failed') ? 'failed' : 'passed' });
  return runId;
}

async function deliveryOf(runId: number) {
  const deliveries = async () =>
    (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries as {
      destination_id: number;
      state: string;
      attempts: number;
      last_error: string | null;
    }[];
  await waitUntil(
    async () => (await deliveries()).some((d) => d.destination_id === teamsId && d.state !== 'pending'),
    20_000,
    `the Teams delivery of run ${runId}`,
  );
  return (await deliveries()).find((d) => d.destination_id === teamsId);
}

/** The card's text, one TextBlock a line. */
const textOf = (card: { body: { text: string }[] }) => card.body.map((block) => block.text).join('\n');

/** The path and query of a link, on the test server (its public URL may name another port). */
const onServer = (link: string) => {
  const url = new URL(link);
  return `${server.url}${url.pathname}${url.search}`;
};

beforeAll(async () => {
  teams = await startTeamsWorkflow();
  server = await startTestServer({ clock, env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
  const { projectId, key } = await seedProject(server.sql, PROJECT);
  await seedEnvironment(server.sql, projectId, 'staging');
  api = client(server.url, key);
});

afterAll(async () => {
  await server?.close();
  await teams?.close();
});

describe('a Microsoft Teams destination', () => {
  it('when a teams destination is made with a Workflows URL, then answers show its scheme and host alone, never the sig, and a secret, a missing URL or a private address is refused naming the field', async () => {
    const made = await api.post('/api/notification-destinations', { type: 'teams', url: teams.url, environments: ['staging'] });
    expect(made.status, made.text).toBe(201);
    teamsId = made.body.data.destination.id;
    const port = new URL(teams.url).port;
    expect(made.body.data.destination).toMatchObject({
      type: 'teams',
      url: `http://127.0.0.1:${port}/••••`,
      repo: null,
      project: null,
      recipients: null,
      has_secret: true,
    });
    const listed = await api.get('/api/notification-destinations');
    for (const text of [made.text, listed.text]) {
      expect(text).not.toContain(teams.sig);
      expect(text).not.toContain('/workflows/');
    }

    const refused: [Record<string, unknown>, string][] = [
      [{ type: 'teams' }, 'body.url: required for a teams destination'],
      [{ type: 'teams', url: teams.url, secret: 's' }, 'body.secret: a teams destination has no secret (its URL is the secret)'],
      [{ type: 'teams', url: teams.url, repo: 'acme/shop' }, 'body.repo'],
      [{ type: 'teams', url: teams.url, recipients: ['a@example.com'] }, 'body.recipients'],
      [{ type: 'teams', url: 'ftp://example.com/workflows' }, 'body.url'],
      // The outbound rules: a private address is refused unless the operator allows it (127.0.0.1 is, here).
      [
        { type: 'teams', url: 'http://10.0.0.7/workflows/abc/triggers/manual/paths/invoke?sig=s' },
        'body.url: the receiver is or resolves to a loopback, private',
      ],
    ];
    for (const [body, message] of refused) {
      const answer = await api.post('/api/notification-destinations', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.message, JSON.stringify(body)).toContain(message);
    }
  });

  it('when a run fails, then the Workflows webhook gets one message whose Adaptive Card the schema takes, saying what Slack says, with buttons to the run and the CI job', async () => {
    const runId = await report(
      [
        [1, 'passed'],
        [2, 'failed'],
        [3, 'flaky'],
      ],
      { ciJob: PIPELINE },
    );
    expect(await deliveryOf(runId)).toMatchObject({ state: 'delivered', attempts: 1, last_error: null });
    expect(teams.requests.map((r) => r.problems)).toEqual([[]]);
    expect(teams.requests[0]?.headers['content-type']).toBe('application/json');
    const [card] = teams.cards();
    const text = textOf(card!);
    expect(text).toContain(`❌ **${ESCAPED_PROJECT}**: run #${await runNumber(server.sql, runId)} failed`);
    expect(text).toContain('**staging** · branch main');
    expect(text).toContain('1 passed · 1 failed · 1 flaky · 0 skipped');
    expect(text.indexOf('**new** test 2 _(a.spec.ts · p)_')).toBeGreaterThan(text.indexOf('Failed tests'));
    expect(text.indexOf('**new** test 2')).toBeLessThan(text.indexOf('**flaky** test 3'));
    expect(card?.actions.map((a) => [a.type, a.title])).toEqual([
      ['Action.OpenUrl', 'Open the run'],
      ['Action.OpenUrl', 'CI job'],
    ]);
    expect(card?.actions[0]?.url).toMatch(new RegExp(`/runs/${runId}\\?token=`));
    expect((await fetch(onServer(card?.actions[0]?.url as string))).status).toBe(200);
    expect(card?.actions[1]?.url).toBe(PIPELINE);
  });

  it('when the same failure comes back in the next run, then the card labels it known, and a new one beside it new', async () => {
    const before = teams.requests.length;
    const runId = await report([
      [1, 'passed'],
      [2, 'failed'],
      [4, 'failed'],
    ]);
    expect(await deliveryOf(runId)).toMatchObject({ state: 'delivered' });
    expect(teams.requests.slice(before).map((r) => r.problems)).toEqual([[]]);
    const text = textOf(teams.cards().at(-1)!);
    expect(text.indexOf('**new** test 4')).toBeGreaterThan(0);
    expect(text.indexOf('**new** test 4')).toBeLessThan(text.indexOf('**known** test 2'));
    // No CI job: no button for one.
    expect(
      teams
        .cards()
        .at(-1)
        ?.actions.map((a) => a.title),
    ).toEqual(['Open the run']);
  });

  it('when the branch and test titles hold markdown, line breaks and date functions, then the card shows them escaped, and the schema still takes it', async () => {
    const before = teams.requests.length;
    const runId = await report([[5, 'failed']], { branch: 'feature/_x_ [y](z)', title: () => '- **sneaky**\n1. list {{TIME(2017-02-14T06:08:39Z)}} <b>' });
    expect(await deliveryOf(runId)).toMatchObject({ state: 'delivered' });
    expect(teams.requests.slice(before).map((r) => r.problems)).toEqual([[]]);
    const text = textOf(teams.cards().at(-1)!);
    expect(text).toContain('branch feature/\\_x\\_ \\[y\\]\\(z\\)');
    expect(text).toContain('**new** \\- \\*\\*sneaky\\*\\* 1. list \\{\\{TIME\\(2017-02-14T06:08:39Z\\)\\}\\} \\<b\\>');
    // Every `*`, `_`, `[`, `{` of user data is escaped: the only markup is Proctor's own.
    for (const block of teams.cards().at(-1)!.body) {
      const unescaped = block.text
        .replace(/\\./g, '')
        .replace(/\*\*[^*]+\*\*/g, '')
        .replace(/_\([^)]*\)_/g, '');
      expect(unescaped, block.text).not.toMatch(/[*_[\]{}<]/);
    }
  });

  it('when the Workflows webhook answers 500 for a while, then the card is delivered once it answers, the same card at every attempt', async () => {
    const before = teams.requests.length;
    teams.failNext(2);
    const runId = await report([[6, 'failed']]);
    await waitUntil(async () => teams.requests.length === before + 1, 10_000, 'a first attempt');
    // The retries' waits (2 s, then 4 s) pass on the server's clock.
    for (let i = 0; i < 2; i++) {
      clock.advance(10_000);
      await waitUntil(async () => teams.requests.length === before + i + 2, 10_000, `attempt ${i + 2}`);
    }
    expect(await deliveryOf(runId)).toMatchObject({ state: 'delivered', attempts: 3, last_error: null });
    const attempts = teams.requests.slice(before);
    expect(attempts.map((r) => r.problems)).toEqual([[], [], []]);
    expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
  });
});

// A story made by hand, for what a card says without a server.
const failure = (n: number, fields: Partial<LabelledFailure> = {}): LabelledFailure => ({
  test_case_id: `${String(n).padStart(20, '0')}-${'b'.repeat(20)}`,
  title: `test ${n}`,
  file_path: 'checkout.spec.ts',
  runner_project: 'chromium',
  label: 'new',
  error_message: null,
  failure_group_id: `fg_${n}`,
  failure_group_title: `Error: order ${n} was not found at checkout.spec.ts:${n}`,
  failure_category: 'assertion',
  owners: [],
  ...fields,
});

const story = (failures: LabelledFailure[], ciJob: string | null): RunStory => ({
  run: {
    id: 7,
    number: 3,
    project_id: 1,
    project_name: 'Shop',
    state: 'failed',
    environment_slug: 'staging',
    environment_name: 'Staging',
    branch: 'main',
    commit: 'c'.repeat(40),
    build_url: null,
    ci_job_url: ciJob,
    scm_actor: null,
    total_count: failures.length,
    success_count: 0,
    failed_count: failures.length,
    flaky_count: 0,
    skipped_count: 0,
    snoozed_count: 1,
    duration: 1000,
    run_ended_at: null,
    summary_url: 'https://proctor.example.com/runs/7?token=t',
  },
  failures,
  mention: 'U024BE7LH',
});

describe('a Teams card', () => {
  it('when a run has more failures than a card lists, then the schema takes the card, which lists 15 with their kinds and groups and says how many more', () => {
    const failures = Array.from({ length: TEAMS_FAILURE_LIMIT + 5 }, (_, i) =>
      failure(i + 1, { label: i === 0 ? 'snoozed' : 'known', title: 'x'.repeat(i === 1 ? 5000 : 5) }),
    );
    const message = teamsMessage(story(failures, PIPELINE));
    const card = message.attachments[0]!.content;
    expect(cardProblems(card)).toEqual([]);
    const text = card.body.map((b) => b.text);
    expect(text).toContain('0 passed · 20 failed · 0 flaky · 0 skipped (1 snoozed)');
    expect(text).toContain('**snoozed** xxxxx _(checkout.spec.ts · chromium)_ \\[assertion\\]: Error: order 1 was not found at checkout.spec.ts:1');
    expect(text.filter((t) => /^\*\*(snoozed|known)\*\*/.test(t))).toHaveLength(TEAMS_FAILURE_LIMIT);
    expect(text.at(-1)).toBe('and 5 more');
    // A title of 5,000 characters is cut: the card stays far below Teams' 28 KB.
    expect(text.some((t) => t.includes(`${'x'.repeat(299)}…`) && !t.includes('x'.repeat(300)))).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(28_000);
    // Slack's mention is of a Slack account: a card mentions nobody.
    expect(JSON.stringify(message)).not.toContain('U024BE7LH');
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Open the run', url: 'https://proctor.example.com/runs/7?token=t' },
      { type: 'Action.OpenUrl', title: 'CI job', url: PIPELINE },
    ]);
  });

  it('when every listed failure is long and all markup, then the card lists fewer, says how many more, and stays below 28 KB', () => {
    const long = (n: number) => failure(n, { title: '*'.repeat(5000), file_path: '_'.repeat(5000), failure_group_title: '['.repeat(5000) });
    const message = teamsMessage(
      story(
        Array.from({ length: 20 }, (_, i) => long(i + 1)),
        PIPELINE,
      ),
    );
    const card = message.attachments[0]!.content;
    expect(cardProblems(card)).toEqual([]);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(28_000);
    const listed = card.body.filter((b) => b.text.startsWith('**new**')).length;
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBeLessThan(TEAMS_FAILURE_LIMIT);
    expect(card.body.at(-1)?.text).toBe(`and ${20 - listed} more`);
  });

  it('when text would start a list or a heading, then it is escaped as CommonMark escapes it', () => {
    expect(teamsText('- a')).toBe('\\- a');
    expect(teamsText('+ a')).toBe('\\+ a');
    expect(teamsText('12. a')).toBe('12\\. a');
    expect(teamsText('# a\r\n> b')).toBe('\\# a \\> b');
    expect(teamsText('a\\*b')).toBe('a\\\\\\*b');
  });

  it('when a card breaks the schema, or a request the shape a Workflows trigger takes, then the checks say so', () => {
    const card = teamsMessage(story([failure(1)], null)).attachments[0]!.content;
    expect(cardProblems({ ...card, body: [{ type: 'TextBlok', text: 'a' }] })).not.toEqual([]);
    expect(cardProblems({ ...card, body: [{ type: 'TextBlock', text: 'a', markdown: false }] })).not.toEqual([]);
    expect(cardProblems({ ...card, actions: [{ type: 'Action.OpenUrl', title: 'Open', url: 'not a url at all' }] })).not.toEqual([]);
    const request = (body: unknown, path = '/workflows/abc/triggers/manual/paths/invoke?api-version=1&sp=x&sv=1.0&sig=s') => ({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const good = teamsMessage(story([failure(1)], null));
    expect(workflowsRequestProblems(request(good), 's')).toEqual([]);
    expect(workflowsRequestProblems(request(good), 'another sig')).toContain('a wrong sig');
    expect(workflowsRequestProblems(request({ ...good, type: 'card' }), 's')).not.toEqual([]);
    expect(workflowsRequestProblems(request({ ...good, summary: 'x' }), 's')).not.toEqual([]);
    expect(workflowsRequestProblems(request({ type: 'message', attachments: [{ ...good.attachments[0], contentType: 'application/json' }] }), 's')).not.toEqual(
      [],
    );
    expect(workflowsRequestProblems(request({ text: 'a Slack message' }), 's')).not.toEqual([]);
  });
});
