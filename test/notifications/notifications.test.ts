import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkAccount } from '../../server/src/users/store.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { runNumber, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

const SECRET = 'a webhook secret of the receiver';

let server: TestServer;
let api: ReturnType<typeof client>;
let slack: Receiver;
let hook: Receiver;
const clock = new TestClock('live');

type Outcome = 'passed' | 'failed' | 'flaky';

/** A run reported into `runId` (or a new report-only run): each test's outcome, failures in group `fg-<test>`. */
async function report(tests: [number, Outcome][], options: { runId?: number; environment?: string; snoozed?: number[] } = {}): Promise<number> {
  const runId =
    options.runId ??
    ((await api.post('/api/test-runs/report', { environment: options.environment ?? 'staging', branch: 'main' })).body.data.test_run.id as number);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map(([n]) => listedTest(testId(n), { title: `test ${n}` })), complete: false });
  const results = tests.flatMap(([n, outcome]) => {
    if (outcome === 'passed') return [attempt(testId(n))];
    const group = `fg-${n}`;
    const first = attempt(testId(n), { final: null, status: 'failed', error_message: `Error: test ${n} broke` });
    const last = attempt(testId(n), {
      retry: 1,
      final: outcome === 'flaky' ? 'flaky' : 'unexpected',
      status: outcome === 'flaky' ? 'passed' : 'failed',
      error_message: outcome === 'flaky' ? null : `Error: test ${n} broke`,
      finalError: `Error: test ${n} broke`,
      failureGroupId: outcome === 'flaky' ? null : group,
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

async function deliveriesOf(runId: number) {
  return (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries as {
    destination_id: number;
    event_id: string;
    state: string;
    attempts: number;
    last_error: string | null;
  }[];
}

async function settled(runId: number, count: number) {
  await waitUntil(
    async () => {
      const deliveries = await deliveriesOf(runId);
      return deliveries.length === count && deliveries.every((d) => d.state !== 'pending');
    },
    20_000,
    `the deliveries of run ${runId}`,
  );
  return deliveriesOf(runId);
}

beforeAll(async () => {
  [slack, hook] = await Promise.all([startReceiver(), startReceiver()]);
  server = await startTestServer({ clock, env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
  const { projectId, key } = await seedProject(server.sql, 'Shop');
  await seedEnvironment(server.sql, projectId, 'staging');
  await seedEnvironment(server.sql, projectId, 'preview');
  api = client(server.url, key);
});

afterAll(async () => {
  await server?.close();
  await slack?.close();
  await hook?.close();
});

describe('notification destinations', () => {
  it('when destinations are made, read, changed and removed, then their secrets and tokens are never shown', async () => {
    const created = await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_not-shown', when: 'failed' });
    expect(created.status).toBe(201);
    const destination = created.body.data.destination;
    expect(destination).toEqual({
      id: destination.id,
      type: 'github',
      url: null,
      repo: 'acme/shop',
      project: null,
      recipients: null,
      channel: null,
      environments: [],
      when: 'failed',
      has_secret: true,
      created_at: destination.created_at,
    });
    expect(created.text).not.toContain('ghp_not-shown');
    const changed = await api.patch(`/api/notification-destinations/${destination.id}`, { environments: ['preview'], when: 'changed' });
    expect(changed.body.data.destination).toMatchObject({ environments: ['preview'], when: 'changed', has_secret: true });
    const listed = await api.get('/api/notification-destinations');
    expect(listed.body.data.destinations.map((d: { id: number }) => d.id)).toEqual([destination.id]);
    expect(listed.text).not.toContain('ghp_not-shown');
    expect((await api.delete(`/api/notification-destinations/${destination.id}`)).body).toEqual({ success: true });
    expect((await api.get(`/api/notification-destinations/${destination.id}`)).status).toBe(404);
  });

  it('when a destination is not whole, then it is refused with a message naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'slack' }, 'body.url'],
      [{ type: 'slack', url: 'ftp://example.com/hook' }, 'body.url'],
      [{ type: 'slack', url: 'https://hooks.example.com/x', secret: 's' }, 'body.secret'],
      [{ type: 'webhook', url: 'https://example.com/hook', repo: 'acme/shop' }, 'body.repo'],
      [{ type: 'github', url: 'https://example.com', repo: 'acme/shop', token: 't' }, 'body.url'],
      [{ type: 'github', repo: 'acme/shop' }, 'body.token'],
      [{ type: 'github', repo: 'not a repo', token: 't' }, 'body.repo'],
      [{ type: 'webhook', url: 'https://example.com/hook', environments: ['nowhere'] }, 'body.environments.0'],
      [{ type: 'webhook', url: 'https://example.com/hook', when: 'sometimes' }, 'body.when'],
      [{ type: 'email', url: 'https://example.com/hook' }, 'body.type'],
    ];
    for (const [body, field] of cases) {
      const refused = await api.post('/api/notification-destinations', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.message, JSON.stringify(body)).toContain(field);
    }
    expect((await api.get('/api/notification-destinations')).body.data.destinations).toEqual([]);
  });
});

describe('a run that ends', () => {
  let slackId: number;
  let hookId: number;

  beforeAll(async () => {
    slackId = (await api.post('/api/notification-destinations', { type: 'slack', url: `${slack.url}/services/T0/B0/x`, environments: ['staging'] })).body.data
      .destination.id;
    hookId = (await api.post('/api/notification-destinations', { type: 'webhook', url: `${hook.url}/proctor`, secret: SECRET, when: 'failed' })).body.data
      .destination.id;
  });

  it('when a run fails, then Slack gets one message and the webhook one signed event, each failure labelled new', async () => {
    const runId = await report([
      [1, 'passed'],
      [2, 'failed'],
      [3, 'flaky'],
    ]);
    const deliveries = await settled(runId, 2);
    expect(deliveries.map((d) => [d.destination_id, d.state, d.attempts])).toEqual([
      [slackId, 'delivered', 1],
      [hookId, 'delivered', 1],
    ]);
    const message = JSON.parse(slack.requests.at(-1)?.body as string) as { text: string };
    expect(message.text).toContain(`run #${await runNumber(server.sql, runId)} failed in *staging* · branch \`main\``);
    expect(message.text).toContain('1 passed · 1 failed · 1 flaky · 0 skipped');
    expect(message.text).toMatch(/<http:\/\/[^|]+\/runs\/\d+\?token=[^|]+\|Open the run>/);
    expect(message.text.indexOf('• *new* test 2')).toBeLessThan(message.text.indexOf('• *flaky* test 3'));

    const request = hook.requests.at(-1);
    const event = JSON.parse(request?.body as string);
    expect(request?.headers['x-proctor-delivery']).toBe(event.id);
    expect(event.id).toBe(deliveries[1]?.event_id);
    expect(event).toMatchObject({ type: 'test_run.ended', test_run: { id: runId, state: 'failed', environment_slug: 'staging', failed_count: 1 } });
    expect(event.failures.map((f: { test_case_id: string; label: string }) => [f.test_case_id, f.label])).toEqual([
      [testId(2), 'new'],
      [testId(3), 'flaky'],
    ]);
    const signature = request?.headers['x-proctor-signature-256'];
    expect(signature).toBe(
      `sha256=${createHmac('sha256', SECRET)
        .update(request?.body as string)
        .digest('hex')}`,
    );
    expect(signature).not.toBe(
      `sha256=${createHmac('sha256', 'another secret')
        .update(request?.body as string)
        .digest('hex')}`,
    );
  });

  it('when the same failure comes back in the next run, then it is known, and a new one beside it new', async () => {
    const runId = await report([
      [1, 'passed'],
      [2, 'failed'],
      [4, 'failed'],
    ]);
    await settled(runId, 2);
    const event = JSON.parse(hook.requests.at(-1)?.body as string);
    expect(event.test_run.id).toBe(runId);
    expect(event.failures.map((f: { test_case_id: string; label: string }) => [f.test_case_id, f.label])).toEqual([
      [testId(4), 'new'],
      [testId(2), 'known'],
    ]);
  });

  it('when a run passes, then only the destination told of every end hears of it', async () => {
    const runId = await report([[1, 'passed']]);
    expect((await settled(runId, 1)).map((d) => d.destination_id)).toEqual([slackId]);
  });

  it('when a run of another environment ends, then only the destinations of every environment hear of it', async () => {
    const runId = await report([[1, 'failed']], { environment: 'preview' });
    expect((await settled(runId, 1)).map((d) => d.destination_id)).toEqual([hookId]);
  });

  it('when a failure is snoozed, then it is labelled snoozed', async () => {
    const snoozed = await api.post('/api/snoozes', { test_ids: [testId(8)], snooze_until: new Date(Date.now() + 86_400_000).toISOString() });
    expect(snoozed.status).toBe(200);
    const runId = await report([
      [8, 'failed'],
      [9, 'failed'],
    ]);
    await settled(runId, 2);
    const event = JSON.parse(hook.requests.at(-1)?.body as string);
    expect(event.failures.map((f: { test_case_id: string; label: string }) => [f.test_case_id, f.label])).toEqual([
      [testId(9), 'new'],
      [testId(8), 'snoozed'],
    ]);
  });

  it('when a destination is told of changes only, then it hears of a run whose state differs from the previous run of its environment and branch', async () => {
    const changes = await startReceiver();
    try {
      const { id } = (await api.post('/api/notification-destinations', { type: 'webhook', url: changes.url, environments: ['preview'], when: 'changed' })).body
        .data.destination;
      const states: string[] = [];
      for (const outcome of ['passed', 'passed', 'failed', 'failed', 'passed'] as const) {
        const runId = await report([[1, outcome]], { environment: 'preview' });
        // The deliveries are written with the run's end, before its last request is answered.
        if ((await deliveriesOf(runId)).some((d) => d.destination_id === id)) states.push(outcome);
      }
      // The environment's previous run had failed.
      expect(states).toEqual(['passed', 'failed', 'passed']);
      await waitUntil(() => changes.requests.length === 3, 10_000, 'three events');
      await api.delete(`/api/notification-destinations/${id}`);
    } finally {
      await changes.close();
    }
  });

  it('when the receiver answers 500 for a while, then the event is delivered once it answers, with the same event id', async () => {
    const before = hook.requests.length;
    hook.failNext(2);
    const runId = await report([[5, 'failed']]);
    await waitUntil(async () => (await deliveriesOf(runId)).find((d) => d.destination_id === hookId)?.attempts === 1, 10_000, 'a first attempt');
    expect((await deliveriesOf(runId)).find((d) => d.destination_id === hookId)).toMatchObject({
      state: 'pending',
      last_error: 'the receiver answered HTTP 500',
    });
    // The retries' waits (2 s, then 4 s) pass on the server's clock.
    for (let i = 0; i < 2; i++) {
      clock.advance(10_000);
      await waitUntil(async () => (await deliveriesOf(runId)).find((d) => d.destination_id === hookId)?.attempts === i + 2, 10_000, `attempt ${i + 2}`);
    }
    const delivery = (await deliveriesOf(runId)).find((d) => d.destination_id === hookId);
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 3 });
    const attempts = hook.requests.slice(before);
    expect(attempts.map((r) => r.headers['x-proctor-delivery'])).toEqual([delivery?.event_id, delivery?.event_id, delivery?.event_id]);
    expect(new Set(attempts.map((r) => r.headers['x-proctor-signature-256'])).size).toBe(1);
  });

  it('when a trigger says send_notifications false, then its end sends nothing', async () => {
    const quiet = (await api.put('/api/test-runs', { environment: 'staging', send_notifications: false })).body.data.test_run.id as number;
    const told = (await api.put('/api/test-runs', { environment: 'staging' })).body.data.test_run.id as number;
    await report([[6, 'failed']], { runId: quiet });
    await report([[6, 'failed']], { runId: told });
    await settled(told, 2);
    expect(await deliveriesOf(quiet)).toEqual([]);
  });

  it('when a run triggered by a person with a linked chat account fails, then the Slack message mentions them', async () => {
    const { userId } = await seedUser(server.sql, []);
    await linkAccount(server.sql, userId, { kind: 'scm', account: { user_id: '42', username: 'octocat', display_name: 'Octo Cat', avatar_url: '' } });
    await linkAccount(server.sql, userId, {
      kind: 'chat',
      account: { user_id: 'U024BE7LH', user_name: 'octo', real_name: 'Octo Cat', display_name: 'octo', image_url: '', team_id: 'T0' },
    });
    const runId = (await api.put('/api/test-runs', { environment: 'staging', scm_actor: 'octocat' })).body.data.test_run.id as number;
    await report([[7, 'failed']], { runId });
    await settled(runId, 2);
    const message = JSON.parse(slack.requests.at(-1)?.body as string) as { text: string };
    expect(message.text).toContain(`run #${await runNumber(server.sql, runId)} failed`);
    expect(message.text).toContain('<@U024BE7LH>');
  });
});
