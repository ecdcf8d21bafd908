import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fail, fixtureRuns, pass, signedInCookie } from '../helpers/digest-fixture.ts';
import { client } from '../helpers/http.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';
import { type SlackApi, startSlackApi } from '../helpers/slack.ts';

// A Slack destination by a Slack app's bot token (issue 58, point 2): a channel id or a person's
// user id, posted with chat.postMessage, so that an owner's routing rule reaches that person. The
// stand-in Web API (test/helpers/slack.ts) checks every request against Slack's published
// OpenAPI description of chat.postMessage.

const TOKEN = 'xoxb-1111111111-2222222222-proctorSlackBotToken';
const USER = 'U024BE7LH';
const CHANNEL = 'C0123456789';
const [payments, search, orders] = [1, 2, 3].map((n) => testId(n)) as [string, string, string];
const NAMES: Record<string, string> = { [payments]: 'charges the card', [search]: 'searches the catalogue', [orders]: 'lists the orders' };
const OWNERS: Record<string, string[]> = { [payments]: ['@acme/payments'], [search]: ['@acme/search'], [orders]: ['@acme/qa'] };

let server: TestServer;
let api: ReturnType<typeof client>;
let slack: SlackApi;
let projectId: number;
let personId: number;
const clock = new TestClock('live');
let runs: ReturnType<typeof fixtureRuns>;

interface Delivery {
  destination_id: number;
  kind: string;
  state: string;
  attempts: number;
  last_error: string | null;
}

const deliveriesOf = async (runId: number) => (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries as Delivery[];

async function settledDelivery(runId: number, destinationId: number, until: (d: Delivery) => boolean = (d) => d.state !== 'pending'): Promise<Delivery> {
  await waitUntil(async () => (await deliveriesOf(runId)).some((d) => d.destination_id === destinationId && until(d)), 20_000, `the delivery of run ${runId}`);
  return (await deliveriesOf(runId)).find((d) => d.destination_id === destinationId) as Delivery;
}

/** A run where the payments and search tests fail and the orders test passes. */
const failingRun = () => runs.report({ [payments]: fail, [search]: fail, [orders]: pass() });

/** The bodies posted since `from`, as the stand-in took them. */
const postedSince = (from: number) => slack.requests.slice(from).map((r) => JSON.parse(r.body) as { channel: string; text: string });

beforeAll(async () => {
  slack = await startSlackApi(TOKEN);
  server = await startTestServer({ clock, env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1', PROCTOR_SLACK_API_URL: slack.url } });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'nightly');
  api = client(server.url, project.key);
  runs = fixtureRuns(api, server.sql, 'nightly', (id) => ({ title: NAMES[id], owners: OWNERS[id] }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  await slack?.close();
});

describe('a Slack destination by bot token', () => {
  it('when a slack destination names a user id and a bot token, then answers show the channel and never the token, and a channel that is not a Slack id is refused naming the field', async () => {
    const made = await api.post('/api/notification-destinations', { type: 'slack', channel: USER, token: TOKEN, when: 'never' });
    expect(made.status, made.text).toBe(201);
    personId = made.body.data.destination.id;
    expect(made.body.data.destination).toMatchObject({ type: 'slack', url: null, channel: USER, has_secret: true });
    const read = await api.get(`/api/notification-destinations/${personId}`);
    const listed = await api.get('/api/notification-destinations');
    for (const text of [made.text, read.text, listed.text]) expect(text).not.toContain(TOKEN);

    const refused: [Record<string, unknown>, string][] = [
      [{ type: 'slack', channel: '#general', token: TOKEN }, 'body.channel: must be a Slack channel id'],
      [{ type: 'slack', channel: 'u024be7lh', token: TOKEN }, 'body.channel'],
      [{ type: 'slack', channel: USER }, 'body.token: required with a channel'],
      [{ type: 'slack', token: TOKEN }, 'body.channel: required with a token'],
      [{ type: 'slack', channel: USER, token: TOKEN, url: 'https://hooks.slack.com/services/T0/B0/x' }, 'body.url'],
      [{ type: 'teams', channel: USER, url: 'https://example.com/hook' }, 'body.channel: only a slack destination has a channel'],
    ];
    for (const [body, message] of refused) {
      const answer = await api.post('/api/notification-destinations', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.message, JSON.stringify(body)).toContain(message);
    }
    const patched = await api.patch(`/api/notification-destinations/${personId}`, { channel: 'general' });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toContain('body.channel');
  });

  it("when an owner's rule names a Slack user destination, then one chat.postMessage to that user id, with the bearer token, names that owner's failures alone", async () => {
    const rule = await api.post('/api/owner-routes', { owner: '@acme/payments', destination_id: personId });
    expect(rule.status, rule.text).toBe(201);
    const before = slack.requests.length;
    const runId = await failingRun();
    const delivery = await settledDelivery(runId, personId);
    expect(delivery).toMatchObject({ kind: 'owners', state: 'delivered', attempts: 1 });
    expect(slack.requests.length - before, 'one chat.postMessage').toBe(1);
    expect(slack.problems.slice(before)).toEqual([[]]);
    const request = slack.requests[before]!;
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const [posted] = postedSince(before);
    expect(posted?.channel).toBe(USER);
    expect(posted?.text).toContain('Failures owned by @acme/payments');
    expect(posted?.text).toContain(NAMES[payments]);
    expect(posted?.text).not.toContain(NAMES[search]);
    expect(posted?.text).not.toContain(NAMES[orders]);

    // The token is in no answer, no page and no log line.
    const cookie = await signedInCookie(server, projectId, clock.now, 'admin');
    const page = await (await fetch(`${server.url}/projects/${projectId}/settings`, { headers: { cookie } })).text();
    expect(page).toContain(`chat.postMessage to ${USER}`);
    expect(page).toContain('name="channel"');
    const audit = await api.get('/api/audit-events');
    expect(audit.status, audit.text).toBe(200);
    expect(audit.text).toContain('destination.created');
    const answers = [page, JSON.stringify(await deliveriesOf(runId)), (await api.get('/api/notification-destinations')).text, audit.text];
    for (const text of answers) expect(text).not.toContain(TOKEN);
    expect(server.logs.join('')).not.toContain(TOKEN);
    expect(server.logs.join('')).not.toContain('proctorSlackBotToken');
  });

  it('when Slack answers ok false with a permanent error, then the delivery fails at once with that reason', async () => {
    const channel = await api.post('/api/notification-destinations', { type: 'slack', channel: CHANNEL, token: TOKEN, environments: ['nightly'] });
    expect(channel.status, channel.text).toBe(201);
    const channelId = channel.body.data.destination.id as number;
    for (const error of ['channel_not_found', 'invalid_auth', 'invalid_blocks']) {
      slack.answerNext({ status: 200, body: { ok: false, error } }, { status: 200, body: { ok: false, error } });
      const runId = await failingRun();
      const failed = await settledDelivery(runId, channelId);
      expect(failed).toMatchObject({ state: 'failed', attempts: 1, last_error: `Slack refused the message: ${error}` });
      await settledDelivery(runId, personId);
    }
    await api.delete(`/api/notification-destinations/${channelId}`);
  });

  it('when Slack answers 503, then the message is posted once more after the wait, and not again once acknowledged', async () => {
    const before = slack.requests.length;
    slack.answerNext({ status: 503, body: { ok: false, error: 'service_unavailable' } });
    const runId = await failingRun();
    const first = await settledDelivery(runId, personId, (d) => d.attempts === 1);
    expect(first).toMatchObject({ state: 'pending', last_error: 'Slack answered HTTP 503' });
    clock.advance(10_000);
    const delivered = await settledDelivery(runId, personId, (d) => d.state === 'delivered');
    expect(delivered.attempts).toBe(2);
    // More time passes and the outbox keeps turning: the acknowledged message is not posted again.
    clock.advance(10 * 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const posted = postedSince(before);
    expect(posted).toHaveLength(2);
    expect(posted[0]).toEqual(posted[1]);
    expect(slack.problems.slice(before)).toEqual([[], []]);
  });

  it('when Slack answers ratelimited with Retry-After, then the next attempt waits that long', async () => {
    slack.answerNext({ status: 429, headers: { 'retry-after': '120' }, body: { ok: false, error: 'ratelimited' } });
    const runId = await failingRun();
    const first = await settledDelivery(runId, personId, (d) => d.attempts === 1);
    expect(first).toMatchObject({ state: 'pending', last_error: 'Slack: ratelimited (HTTP 429)' });
    // Past the usual 2 s wait, before Retry-After's 120 s: not tried again.
    clock.advance(60_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await settledDelivery(runId, personId, () => true)).attempts).toBe(1);
    clock.advance(61_000);
    expect((await settledDelivery(runId, personId, (d) => d.state === 'delivered')).attempts).toBe(2);
  });
});
