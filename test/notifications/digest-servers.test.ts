import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { freePort, type ServerProcess, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject } from '../helpers/server.ts';

// Two `proctor serve` processes on one database, each with its sweeper ticking every 0.2 s: a
// digest due is sent once. The subscription is made due again and again (as a server whose clock
// lags, or a stale read, would see it), so that both servers queue the same moment many times:
// only the outbox's key (subscription, moment) holds them to one delivery.

const canRun = process.env.DATABASE_URL !== undefined;
let db: TestDatabase;
let slack: Receiver;
const servers: ServerProcess[] = [];
let subscriptionId: number;

beforeAll(async () => {
  if (!canRun) return;
  db = await createTestDatabase();
  slack = await startReceiver();
  const { projectId, key } = await seedProject(db.sql, 'Shop');
  const environmentId = await seedEnvironment(db.sql, projectId, 'nightly');
  const env = {
    DATABASE_URL: db.url,
    PROCTOR_SWEEP_INTERVAL_S: '0.2',
    PROCTOR_EXECUTOR_CONCURRENCY: '0',
    PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1',
    PROCTOR_SIGNING_SECRET: 'test-signing-secret-0123456789',
    PROCTOR_DEMO: 'false',
  };
  const ports = [await freePort(), await freePort()];
  for (const port of ports) servers.push(spawnProctor(['serve'], { ...env, PORT: String(port) }));
  await Promise.all(ports.map((port) => waitForHealth(`http://127.0.0.1:${port}`)));
  const api = client(`http://127.0.0.1:${ports[0]}`, key);
  const destination = await api.post('/api/notification-destinations', { type: 'slack', url: slack.url, when: 'never' });
  expect(destination.status, destination.text).toBe(201);
  const subscription = await api.post('/api/digest-subscriptions', {
    environment_id: environmentId,
    destination_id: destination.body.data.destination.id,
    period: 'day',
    hour: 3,
  });
  expect(subscription.status, subscription.text).toBe(201);
  subscriptionId = subscription.body.data.subscription.id;
}, 180_000);

afterAll(async () => {
  for (const server of servers) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await slack?.close();
  await db?.drop();
});

describe.skipIf(!canRun)('a digest across two server processes', () => {
  it('when both servers find the same moment due again and again, then the destination gets one digest of it', async () => {
    for (let round = 0; round < 5; round++) {
      await db.sql`update digest_subscriptions set next_due_at = now() - interval '1 minute' where id = ${subscriptionId}`;
      await waitUntil(
        async () => (await db.sql`select 1 from digest_subscriptions where id = ${subscriptionId} and next_due_at > now()`).length === 1,
        20_000,
        `round ${round}: a server took the subscription`,
      );
    }
    await waitUntil(async () => slack.requests.length >= 1, 20_000, 'the digest');
    // Ten more ticks of each server: nothing else comes.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rows = await db.sql<{ state: string }[]>`select state from notification_deliveries where digest_subscription_id = ${subscriptionId}`;
    expect(rows.map((row) => row.state)).toEqual(['delivered']);
    expect(slack.requests).toHaveLength(1);
    expect(JSON.parse(slack.requests[0]!.body).blocks[0].text.text).toMatch(/^Shop · nightly: daily digest, \d{4}-\d\d-\d\d$/);
    for (const server of servers) expect(server.output()).not.toMatch(/sweep failed|sending notifications failed/);
  });
});
