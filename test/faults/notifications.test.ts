import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { freePort, type ServerProcess, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

async function failingRun(api: Api, tests = 1): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id as number;
  const ids = Array.from({ length: tests }, (_, i) => testId(100 + i));
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id, i) => listedTest(id, { title: `failure ${String(i).padStart(2, '0')}` })) });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.flatMap((id) => attemptsOf(id, 'unexpected')) });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
  return runId;
}

async function deliveryOf(api: Api, runId: number) {
  const [delivery] = (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries;
  return delivery as { event_id: string; state: string; attempts: number; last_error: string | null } | undefined;
}

describe('a server killed while it delivers', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let dataDir: string;
  let running: ServerProcess | null = null;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-notify-'));
  });

  afterAll(async () => {
    running?.child.kill('SIGKILL');
    await receiver?.close();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function serve(port: number): Promise<ServerProcess> {
    const started = spawnProctor(['serve'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      PROCTOR_DATA_DIR: dataDir,
      PROCTOR_DEMO: 'false',
      PROCTOR_EXECUTOR_CONCURRENCY: '0',
      PROCTOR_SIGNING_SECRET: 'test-signing-secret-0123456789',
      PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1',
    });
    await waitForHealth(`http://127.0.0.1:${port}`);
    return started;
  }

  it('when the server is killed during a delivery, then it delivers it after the restart, with the same event id and bytes', async () => {
    const { projectId, key } = await seedProject(db.sql);
    await seedEnvironment(db.sql, projectId, 'staging');
    const port = await freePort();
    running = await serve(port);
    const api = client(`http://127.0.0.1:${port}`, key);
    expect((await api.post('/api/notification-destinations', { type: 'webhook', url: `${receiver.url}/hook`, secret: 'shh, a secret' })).status).toBe(201);
    receiver.holdNext(1);
    const runId = await failingRun(api);
    await waitUntil(() => receiver.requests.length === 1, 15_000, 'the delivery under way');
    running.child.kill('SIGKILL');
    await running.exited;

    running = await serve(port);
    await waitUntil(async () => (await deliveryOf(api, runId))?.state === 'delivered', 30_000, 'the delivery after the restart');
    const [held, again] = receiver.requests;
    expect(receiver.requests).toHaveLength(2);
    expect(again?.headers['x-proctor-delivery']).toBe(held?.headers['x-proctor-delivery']);
    expect(again?.body).toBe(held?.body);
    expect((await deliveryOf(api, runId))?.event_id).toBe(held?.headers['x-proctor-delivery']);
    expect(running.output()).not.toContain('shh, a secret');
  }, 90_000);
});

describe('deliveries that cannot go through', () => {
  let server: TestServer;
  let api: Api;
  let receiver: Receiver;
  const clock = new TestClock('live');

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({ clock, env: { PROCTOR_NOTIFY_RETRY_HOURS: '0.01', PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
    const { projectId, key } = await seedProject(server.sql);
    await seedEnvironment(server.sql, projectId, 'staging');
    api = client(server.url, key);
  });

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('when the receiver keeps failing past PROCTOR_NOTIFY_RETRY_HOURS, then the delivery is marked failed with its last error', async () => {
    const { id } = (await api.post('/api/notification-destinations', { type: 'slack', url: `${receiver.url}/slack` })).body.data.destination;
    receiver.failNext(1000, 503);
    const runId = await failingRun(api, 20);
    await waitUntil(async () => (await deliveryOf(api, runId))?.attempts === 1, 10_000, 'a first attempt');
    // 36 s of retries: 2, 4, 8, 16 s waits, then past the limit.
    for (let i = 0; i < 8 && (await deliveryOf(api, runId))?.state === 'pending'; i++) {
      const attempts = (await deliveryOf(api, runId))?.attempts ?? 0;
      clock.advance(20_000);
      await waitUntil(async () => ((await deliveryOf(api, runId))?.attempts ?? 0) > attempts, 10_000, 'another attempt');
    }
    expect(await deliveryOf(api, runId)).toMatchObject({ state: 'failed', last_error: 'the receiver answered HTTP 503' });
    const attempts = (await deliveryOf(api, runId))?.attempts ?? 0;
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(receiver.requests).toHaveLength(attempts);
    // Twenty failures: fifteen listed, the rest counted.
    const { text } = JSON.parse(receiver.requests[0]?.body as string) as { text: string };
    expect(text.match(/• \*new\* failure/g)).toHaveLength(15);
    expect(text).toContain('and 5 more');
    await api.delete(`/api/notification-destinations/${id}`);
  }, 60_000);
});
