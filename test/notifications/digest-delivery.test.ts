import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDueDigests } from '../../server/src/notifications/index.ts';
import { fail, fixtureRuns, flaky, type Line, pass, signedInCookie, wobbled } from '../helpers/digest-fixture.ts';
import { client } from '../helpers/http.ts';
import { linksIn, type MailServer, startMailServer } from '../helpers/mail.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';
import { cardProblems, startTeamsWorkflow, type TeamsWorkflow } from '../helpers/teams.ts';

// Digests delivered on a schedule (issue 58, point 4): a fixture project whose tests are known —
// one turned flaky on the digest's day, one was flaky the day before only, one broke on the day
// (its title hostile markup), one got 40% slower from the day on, two steady — subscribed daily to
// Slack (07:00 Paris) and mail (06:00 UTC) and weekly to Teams (Tuesday 06:00 UTC). 24 runs, one
// every two hours: runs 1-12 on 1 November 2026, 13-24 on 2 November (the daily digest's day); the
// digests are due on 3 November, a Tuesday. The sweeper's tick is called as every server's sweeper
// calls it, twice at once over two connection pools (two servers) and again later.

let server: TestServer;
let api: ReturnType<typeof client>;
let mail: MailServer;
let slack: Receiver;
let teams: TeamsWorkflow;
let projectId: number;
let environmentId: number;
const destinations = { slack: 0, email: 0, teams: 0 };
let routedEmail: number;
const clock = new TestClock(new Date('2026-10-31T22:30:00Z'));
const [turnedFlaky, oldFlaky, broke, slowed, steady1, steady2] = [1, 2, 3, 4, 5, 6].map((n) => testId(n)) as [string, string, string, string, string, string];
const HOSTILE = '<img src=x onerror="alert(1)"> broke & "quoted" *bold* [x](https://evil.example)';
const NAMES: Record<string, string> = {
  [turnedFlaky]: 'turns flaky',
  [oldFlaky]: 'was flaky',
  [slowed]: 'got slower',
  [steady1]: 'searches the catalogue',
  [steady2]: 'lists the orders',
};
const OWNERS: Record<string, string[]> = { [broke]: ['@acme/payments'], [steady1]: ['@acme/search'] };
const ADDRESS = 'team-lead@example.com';
const ROUTED_ADDRESS = 'search-team@example.com';

let runs: ReturnType<typeof fixtureRuns>;
const reportRun = (tests: Record<string, Line>) => runs.report(tests);

async function destination(body: Record<string, unknown>): Promise<number> {
  const made = await api.post('/api/notification-destinations', { when: 'never', ...body });
  expect(made.status, made.text).toBe(201);
  return made.body.data.destination.id;
}

async function subscribe(body: Record<string, unknown>) {
  const made = await api.post('/api/digest-subscriptions', { environment_id: environmentId, ...body });
  expect(made.status, made.text).toBe(201);
  return made.body.data.subscription;
}

/** Digest deliveries in the outbox, per destination. */
async function digestDeliveries() {
  return server.sql<{ destination_id: number; due_at: Date; state: string; attempts: number; last_error: string | null }[]>`
    select destination_id, due_at, state, attempts, last_error from notification_deliveries where kind = 'digest' order by id`;
}

async function allSent(count: number) {
  await waitUntil(
    async () => {
      const rows = await digestDeliveries();
      return rows.length === count && rows.every((row) => row.state !== 'pending');
    },
    30_000,
    `${count} digests sent`,
  );
  return digestDeliveries();
}

/** The test ids a text's links name (…/tests/<id>). */
const testsLinked = (text: string) => [...text.matchAll(/\/tests\/([0-9a-f]{20}-[0-9a-f]{20})/g)].map((match) => match[1]);

beforeAll(async () => {
  [mail, slack, teams] = await Promise.all([startMailServer(), startReceiver(), startTeamsWorkflow()]);
  server = await startTestServer({
    clock,
    env: {
      PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1',
      PROCTOR_SMTP_URL: mail.smtpUrl,
      PROCTOR_MAIL_FROM: 'Proctor <ci@proctor.example>',
    },
  });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  api = client(server.url, project.key);
  runs = fixtureRuns(api, server.sql, 'nightly', (id) => ({ title: id === broke ? HOSTILE : NAMES[id], owners: OWNERS[id] ?? ['@acme/qa'] }));
  for (let run = 1; run <= 24; run++) {
    clock.advance(2 * 60 * 60 * 1000);
    await reportRun({
      [turnedFlaky]: run === 16 || run === 20 ? flaky : pass(),
      [oldFlaky]: run === 5 ? flaky : pass(),
      [broke]: run >= 19 ? fail : pass(),
      // 1000 ms ± 2.5%, then 40% slower from run 13 (the digest's day) on.
      [slowed]: pass(wobbled(run > 12 ? 1400 : 1000, run)),
      [steady1]: pass(),
      [steady2]: pass(300),
    });
  }
  environmentId = (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'nightly').id;
  destinations.slack = await destination({ type: 'slack', url: slack.url });
  destinations.email = await destination({ type: 'email', recipients: [ADDRESS] });
  destinations.teams = await destination({ type: 'teams', url: teams.url });
  routedEmail = await destination({ type: 'email', recipients: [ROUTED_ADDRESS] });
}, 300_000);

afterAll(async () => {
  await server?.close();
  await Promise.all([mail?.close(), slack?.close(), teams?.close()]);
});

describe('digests sent on a schedule', () => {
  it('when a subscription names a destination that is not read by people, an unknown time zone, or a week without a weekday, then a 400 names the field', async () => {
    const hook = await destination({ type: 'webhook', url: `${slack.url}/hook` });
    const refused: [Record<string, unknown>, string][] = [
      [{ destination_id: hook, period: 'day' }, 'body.destination_id: a webhook destination takes run endings only'],
      [{ destination_id: 999_999, period: 'day' }, 'body.destination_id: no notification destination 999999'],
      [{ destination_id: destinations.slack, period: 'day', time_zone: 'Mars/Olympus' }, 'time_zone'],
      [{ destination_id: destinations.slack, period: 'week' }, 'body.weekday: required for a weekly digest'],
      [{ destination_id: destinations.slack, period: 'day', weekday: 3 }, 'body.weekday: only a weekly digest has a weekday'],
      [{ destination_id: destinations.slack, period: 'day', hour: 24 }, 'hour'],
    ];
    for (const [body, message] of refused) {
      const answer = await api.post('/api/digest-subscriptions', { environment_id: environmentId, ...body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(answer.body), JSON.stringify(body)).toContain(message);
    }
    expect((await api.delete(`/api/notification-destinations/${hook}`)).status).toBe(200);
  });

  it("when subscriptions are made, then each is next due at its hour of its time zone, and the same destination's second one of a period is a conflict", async () => {
    // 07:00 in Paris is 06:00 UTC in November (CET).
    const paris = await subscribe({ destination_id: destinations.slack, period: 'day', hour: 7, time_zone: 'Europe/Paris' });
    expect(paris).toMatchObject({
      period: 'day',
      hour: 7,
      weekday: null,
      time_zone: 'Europe/Paris',
      next_due_at: '2026-11-03T06:00:00.000Z',
      last_delivery: null,
    });
    expect(await subscribe({ destination_id: destinations.email, period: 'day', hour: 6 })).toMatchObject({ next_due_at: '2026-11-03T06:00:00.000Z' });
    expect(await subscribe({ destination_id: destinations.teams, period: 'week', weekday: 2, hour: 6 })).toMatchObject({
      next_due_at: '2026-11-03T06:00:00.000Z',
    });
    const again = await api.post('/api/digest-subscriptions', { environment_id: environmentId, destination_id: destinations.slack, period: 'day' });
    expect(again.status).toBe(409);
    expect((await api.get('/api/digest-subscriptions')).body.data.subscriptions).toHaveLength(3);
  });

  it('when two servers tick at once after the hour and again later, then each destination gets exactly one digest, holding exactly the tests that turned flaky, broke, got slower and got flakier', async () => {
    clock.now = new Date('2026-11-03T05:59:00Z');
    expect(await queueDueDigests(server.sql, clock.now)).toEqual([]);
    clock.now = new Date('2026-11-03T06:00:30Z');
    // A second server: its own connections to the same database.
    const other = postgres(server.db.url, { max: 2, onnotice: () => {} });
    try {
      const [a, b] = await Promise.all([queueDueDigests(server.sql, clock.now), queueDueDigests(other, clock.now)]);
      expect([...a, ...b]).toHaveLength(3);
      clock.now = new Date('2026-11-03T06:20:00Z');
      expect(await queueDueDigests(other, clock.now)).toEqual([]);
      expect(await queueDueDigests(server.sql, clock.now)).toEqual([]);
    } finally {
      await other.end();
    }
    const rows = await allSent(3);
    expect(rows.map((row) => [row.state, row.last_error, row.due_at.toISOString()])).toEqual(
      Array.from({ length: 3 }, () => ['delivered', null, '2026-11-03T06:00:00.000Z']),
    );

    // Slack: Block Kit within its limits; one section per kind of news, each listing exactly its tests.
    expect(slack.requests).toHaveLength(1);
    const message = JSON.parse(slack.requests[0]!.body) as { text: string; blocks: { type: string; text?: { type: string; text: string } }[] };
    expect(message.blocks.length).toBeLessThanOrEqual(50);
    expect(message.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Shop · nightly: daily digest, 2026-11-02' } });
    for (const block of message.blocks.filter((b) => b.type === 'section')) expect(block.text!.text.length).toBeLessThanOrEqual(3000);
    const section = (heading: string) => message.blocks.find((b) => b.type === 'section' && b.text!.text.startsWith(`*${heading}*`))?.text?.text ?? '';
    expect(message.blocks[1]!.text!.text).toBe('12 runs, 50% passed (the day before: 12 runs, 100% passed)');
    expect(testsLinked(section('Turned broken'))).toEqual([broke]);
    expect(section('Turned broken')).toContain(`<${server.url}/projects/${projectId}/runs/${runs.runIds[19]}|run #${runs.runNumbers[19]}>`);
    expect(section('Turned broken')).toContain('&lt;img src=x onerror="alert(1)"&gt; broke &amp; "quoted"');
    expect(testsLinked(section('Turned flaky'))).toEqual([turnedFlaky]);
    expect(testsLinked(section('Got slower'))).toEqual([slowed]);
    expect(testsLinked(section('Got flakier'))).toEqual([turnedFlaky]);
    expect(section('Got flakier')).toContain('flaky in 16.7% of 12 runs, was 0% the 14 days before');
    expect(section('Got slower')).toContain(`since <${server.url}/projects/${projectId}/runs/${runs.runIds[13]}|run #${runs.runNumbers[13]}>`);
    expect(testsLinked(section('Flakiest')).sort()).toEqual([turnedFlaky, oldFlaky].sort());
    expect(testsLinked(section('Most failing'))).toEqual([broke]);
    expect(testsLinked(section('Slowest'))[0]).toBe(slowed);
    expect(JSON.stringify(message.blocks.at(-1))).toContain(`${server.url}/projects/${projectId}/digest?environment_id=${environmentId}&period=day`);

    // Mail: the same, the HTML escaped and a text part.
    const received = await mail.received();
    expect(received.map((m) => m.to)).toEqual([[ADDRESS]]);
    const digestMail = received[0]!;
    expect(digestMail.subject).toBe('Shop · nightly: daily digest, 2026-11-02');
    const textSection = (heading: string) => new RegExp(`${heading} \\(\\d+\\):\\n(.*?)\\n\\n`, 's').exec(digestMail.text)?.[1] ?? '';
    expect(testsLinked(textSection('Turned broken'))).toEqual([broke]);
    expect(testsLinked(textSection('Turned flaky'))).toEqual([turnedFlaky]);
    expect(testsLinked(textSection('Got slower'))).toEqual([slowed]);
    expect(testsLinked(textSection('Got flakier'))).toEqual([turnedFlaky]);
    expect(digestMail.text).toContain('12 runs, 50% passed (the day before: 12 runs, 100% passed)');
    expect(linksIn(digestMail.text)).toContain(`${server.url}/projects/${projectId}/digest?environment_id=${environmentId}&period=day`);
    expect(digestMail.html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt; broke &amp; &quot;quoted&quot;');
    expect(digestMail.html).not.toContain('<img src=x');

    // Teams: the weekly card, valid by the Adaptive Card schema; the week holds the earlier flaky test as turned too.
    expect(teams.requests.map((r) => r.problems)).toEqual([[]]);
    const [card] = teams.cards();
    expect(cardProblems(card)).toEqual([]);
    const text = card!.body.map((block) => block.text).join('\n');
    expect(text).toContain('Shop · nightly: weekly digest, 2026-10-27 – 2026-11-02');
    expect(text).toContain('24 runs, 75% passed \\(the week before: no runs\\)');
    const block = (heading: string) => text.slice(text.indexOf(`${heading} (`)).split(/\n(?=[A-Z][a-z ]+ \(\d+\)\n)/)[0] ?? '';
    expect(testsLinked(block('Turned flaky'))).toEqual([oldFlaky, turnedFlaky]);
    expect(testsLinked(block('Turned broken'))).toEqual([broke]);
    // Nothing ran in the 14 days before the week: both flaky tests rose from no runs, the more flaky first.
    expect(testsLinked(block('Got flakier'))).toEqual([turnedFlaky, oldFlaky]);
    expect(block('Got flakier')).toContain('was not run the 14 days before');
    expect(block('Turned broken')).toContain('\\<img src=x onerror="alert\\(1\\)"\\> broke & "quoted" \\*bold\\* \\[x\\]\\(https://evil.example\\)');
    expect(card!.actions).toEqual([
      {
        type: 'Action.OpenUrl',
        title: 'Open the digest',
        url: `${server.url}/projects/${projectId}/digest?environment_id=${environmentId}&period=week`,
      },
    ]);

    const listed = (await api.get('/api/digest-subscriptions')).body.data.subscriptions;
    expect(listed.map((s: { last_delivery: { state: string } }) => s.last_delivery.state)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(listed.find((s: { destination_id: number }) => s.destination_id === destinations.teams).next_due_at).toBe('2026-11-10T06:00:00.000Z');
  });

  it('when the next day comes, then the daily digests are sent once more and the weekly one is not', async () => {
    clock.now = new Date('2026-11-04T06:01:00Z');
    expect((await queueDueDigests(server.sql, clock.now)).length).toBe(2);
    expect(await queueDueDigests(server.sql, clock.now)).toEqual([]);
    await allSent(5);
    expect(slack.requests).toHaveLength(2);
    expect(teams.requests).toHaveLength(1);
    expect((await mail.received()).length).toBe(2);
  });

  it('when a receiver fails, then the digest is retried from the outbox with the same body', async () => {
    slack.failNext(1, 503);
    clock.now = new Date('2026-11-05T06:01:00Z');
    await queueDueDigests(server.sql, clock.now);
    await waitUntil(async () => slack.requests.length === 3, 20_000, 'the first attempt');
    clock.advance(10_000);
    await waitUntil(async () => slack.requests.length === 4, 20_000, 'the retry');
    expect(slack.requests[3]!.body).toBe(slack.requests[2]!.body);
    const rows = await allSent(7);
    expect(rows.filter((row) => row.destination_id === destinations.slack).map((row) => [row.state, row.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 2],
    ]);
  });
});

describe("owners' routing rules", () => {
  it("when a run fails tests of two owners, then each owner's destination gets only its owner's failures, once, and a rule whose owner has none gets nothing", async () => {
    const rules: [string, number][] = [
      ['@acme/pay*', destinations.slack],
      // The same destination twice: one message still, naming both rules.
      ['@acme/payments', destinations.slack],
      ['@ACME/Search', routedEmail],
      ['@acme/nobody', destinations.teams],
    ];
    for (const [owner, destinationId] of rules) {
      const made = await api.post('/api/owner-routes', { owner, destination_id: destinationId });
      expect(made.status, made.text).toBe(201);
    }
    expect((await api.post('/api/owner-routes', { owner: '@acme/pay*', destination_id: destinations.slack })).status).toBe(409);
    const before = { slack: slack.requests.length, teams: teams.requests.length };
    clock.now = new Date('2026-11-05T09:00:00Z');
    const runId = await reportRun({
      [turnedFlaky]: { outcome: 'flaky', duration: 200 },
      [broke]: { outcome: 'unexpected', duration: 200 },
      [steady1]: { outcome: 'unexpected', duration: 200 },
      [steady2]: { outcome: 'unexpected', duration: 300 },
    });
    await waitUntil(
      async () => {
        const rows = await server.sql<{ state: string }[]>`select state from notification_deliveries where test_run_id = ${runId}`;
        return rows.length === 2 && rows.every((row) => row.state === 'delivered');
      },
      20_000,
      "the owners' deliveries",
    );
    const deliveries = (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries;
    expect(deliveries.map((d: { destination_id: number; kind: string }) => [d.destination_id, d.kind]).sort()).toEqual(
      [
        [destinations.slack, 'owners'],
        [routedEmail, 'owners'],
      ].sort(),
    );

    expect(slack.requests).toHaveLength(before.slack + 1);
    const routed = (JSON.parse(slack.requests.at(-1)!.body) as { text: string }).text;
    expect(routed).toContain('Failures owned by @acme/pay*, @acme/payments');
    expect(routed).toContain('broke &amp; "quoted"');
    expect(routed).not.toContain(NAMES[steady1]);
    expect(routed).not.toContain(NAMES[steady2]);
    expect(routed).not.toContain(NAMES[turnedFlaky]);

    const searchMail = await mail.mailTo(ROUTED_ADDRESS);
    expect(searchMail.subject).toContain('Failures owned by @ACME/Search');
    expect(searchMail.text).toContain(NAMES[steady1]);
    expect(searchMail.text).not.toContain('broke');
    expect(searchMail.text).not.toContain(NAMES[steady2]);
    expect(teams.requests).toHaveLength(before.teams);
  });

  it("when an owner's rule names a Teams channel, then its Workflows webhook gets one card the schema takes, with that owner's failures alone", async () => {
    const made = await api.post('/api/owner-routes', { owner: '@acme/qa', destination_id: destinations.teams });
    expect(made.status, made.text).toBe(201);
    const before = teams.requests.length;
    clock.now = new Date('2026-11-05T10:00:00Z');
    const runId = await reportRun({
      [broke]: { outcome: 'unexpected', duration: 200 },
      [steady1]: { outcome: 'unexpected', duration: 200 },
      [steady2]: { outcome: 'unexpected', duration: 300 },
    });
    await waitUntil(
      async () => {
        const rows = await server.sql<{ state: string }[]>`select state from notification_deliveries where test_run_id = ${runId}`;
        return rows.length === 3 && rows.every((row) => row.state === 'delivered');
      },
      20_000,
      "the owners' deliveries",
    );
    const kinds = (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries.map(
      (d: { destination_id: number; kind: string }) => [d.destination_id, d.kind],
    );
    expect(kinds).toContainEqual([destinations.teams, 'owners']);
    expect(teams.requests.slice(before).map((r) => r.problems)).toEqual([[]]);
    const card = teams.cards().at(-1)!;
    expect(cardProblems(card)).toEqual([]);
    const text = card.body.map((block) => block.text).join('\n');
    expect(text).toContain('Failures owned by @acme/qa');
    expect(text).toContain(NAMES[steady2]);
    expect(text).not.toContain(NAMES[steady1]);
    expect(text).not.toContain('broke');
    expect(card.actions[0]?.url).toMatch(new RegExp(`/runs/${runId}\\?token=`));
  });
});

describe('the settings page', () => {
  it("when an admin opens Settings, then it lists the digests with their schedule and latest delivery and the owners' rules, with forms to add and remove them; a viewer gets no form", async () => {
    const page = async (role: 'admin' | 'viewer') => {
      const cookie = await signedInCookie(server, projectId, clock.now, role);
      const response = await fetch(`${server.url}/projects/${projectId}/settings`, { headers: { cookie } });
      expect(response.status).toBe(200);
      return response.text();
    };
    const admin = await page('admin');
    expect(admin).toContain('weekly, Tuesday at 06:00 UTC');
    expect(admin).toContain('daily at 07:00 Europe/Paris');
    expect(admin).toContain('delivered (2026-11-03 06:00 UTC)');
    expect(admin).toContain('<code>@acme/pay*</code>');
    expect(admin).toContain('data-api="POST /api/digest-subscriptions"');
    expect(admin).toContain('data-api="POST /api/owner-routes"');
    expect(admin).toMatch(/data-api="DELETE \/api\/owner-routes\/\d+"/);
    expect(admin).toContain('never (digests and owners only)');
    const viewer = await page('viewer');
    expect(viewer).toContain('<code>@acme/pay*</code>');
    expect(viewer).not.toContain('data-api="POST /api/digest-subscriptions"');
    expect(viewer).not.toContain('data-api="DELETE /api/owner-routes');
  });
});
