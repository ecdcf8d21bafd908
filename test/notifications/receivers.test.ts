import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowList, type Resolver } from '../../server/src/outbound/addresses.ts';
import { postToReceiver } from '../../server/src/outbound/receiver.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { freePort } from '../helpers/process.ts';
import { RECEIVER_ERROR_PAGE, type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

/** Every spelling of an address inside the machine or its network that a URL can carry. */
function insideSpellings(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/hook`,
    `http://127.1:${port}/hook`,
    `http://2130706433:${port}/hook`,
    `http://0x7f000001:${port}/hook`,
    `http://0177.0.0.1:${port}/hook`,
    `http://0.0.0.0:${port}/hook`,
    `http://[::1]:${port}/hook`,
    `http://[0:0:0:0:0:0:0:1]:${port}/hook`,
    `http://[::ffff:127.0.0.1]:${port}/hook`,
    `http://[::ffff:7f00:1]:${port}/hook`,
    `http://[::]:${port}/hook`,
    `http://localhost:${port}/hook`,
    `http://LOCALHOST.:${port}/hook`,
  ];
}

const PRIVATE_NETWORKS = [
  'http://10.1.2.3/hook',
  'http://172.16.0.1/hook',
  'http://192.168.1.1/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/hook',
  'http://224.0.0.1/hook',
  'http://255.255.255.255/hook',
  'http://[fd00::1]/hook',
  'http://[fe80::1]/hook',
  'http://[ff02::1]/hook',
  'http://[64:ff9b::a9fe:a9fe]/hook',
  'http://[2002:a9fe:a9fe::1]/hook',
];

let counter = 0;

/** A report-only run that ends failed, which every destination is told of. */
async function endedRun(api: Api): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', run_key: `ssrf-${++counter}` })).body.data.test_run.id as number;
  const id = testId(900 + counter);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(id)] });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(id, 'unexpected') });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
  return runId;
}

async function settledDeliveries(api: Api, runId: number, count: number) {
  let deliveries: { destination_id: number; state: string; last_error: string | null }[] = [];
  await waitUntil(
    async () => {
      deliveries = (await api.get(`/api/notification-deliveries?test_run_id=${runId}&per_page=100`)).body.data.deliveries;
      return deliveries.length === count && deliveries.every((d) => d.state !== 'pending' || d.last_error !== null);
    },
    30_000,
    `the deliveries of run ${runId}`,
  );
  return deliveries;
}

describe('receivers inside the network, by default', () => {
  let server: TestServer;
  let api: Api;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer();
    const { projectId, key } = await seedProject(server.sql);
    await seedEnvironment(server.sql, projectId, 'staging');
    api = client(server.url, key);
  });

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('when a destination names a loopback or private address in any spelling, then it is refused, naming body.url, and nothing is stored', async () => {
    for (const url of [...insideSpellings(receiver.port), ...PRIVATE_NETWORKS]) {
      for (const type of ['webhook', 'slack']) {
        const refused = await api.post('/api/notification-destinations', { type, url });
        expect(refused.status, `${type} ${url}`).toBe(400);
        expect(refused.body.error.message, url).toMatch(/^body\.url: .*non-public address/);
      }
    }
    const created = await api.post('/api/notification-destinations', { type: 'webhook', url: 'https://hooks.example.com/proctor' });
    expect(created.status).toBe(201);
    const changed = await api.patch(`/api/notification-destinations/${created.body.data.destination.id}`, {
      url: `http://[::ffff:127.0.0.1]:${receiver.port}/`,
    });
    expect(changed.status).toBe(400);
    expect(changed.body.error.message).toMatch(/^body\.url: /);
    // Shown by its scheme and host alone (a destination's URL is a credential): still the one made.
    expect((await api.get('/api/notification-destinations')).body.data.destinations.map((d: { url: string }) => d.url)).toEqual([
      'https://hooks.example.com/••••',
    ]);
    await api.delete(`/api/notification-destinations/${created.body.data.destination.id}`);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('receivers the operator allows (PROCTOR_NOTIFY_ALLOW_HOSTS)', () => {
  let server: TestServer;
  let api: Api;
  let v4: Receiver;
  let v6: Receiver;

  beforeAll(async () => {
    v4 = await startReceiver();
    v6 = await startReceiver({ host: '::1', port: v4.port });
    server = await startTestServer({ env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.0/8, ::1, 0.0.0.0, localhost' } });
    const { projectId, key } = await seedProject(server.sql);
    await seedEnvironment(server.sql, projectId, 'staging');
    api = client(server.url, key);
  });

  afterAll(async () => {
    await server?.close();
    await v4?.close();
    await v6?.close();
  });

  it('when the allow list names loopback, then every spelling of it is accepted and delivered to', async () => {
    const urls = insideSpellings(v4.port).filter((url) => !url.includes('[::]'));
    for (const url of urls) expect((await api.post('/api/notification-destinations', { type: 'webhook', url })).status, url).toBe(201);
    const deliveries = await settledDeliveries(api, await endedRun(api), urls.length);
    expect(deliveries.map((d) => d.state)).toEqual(urls.map(() => 'delivered'));
    expect(v4.requests.length + v6.requests.length).toBe(urls.length);
    // Private networks beyond the list stay refused.
    expect((await api.post('/api/notification-destinations', { type: 'webhook', url: 'http://10.1.2.3/hook' })).status).toBe(400);
  });
});

describe("what a delivery keeps of the receiver's answer", () => {
  let server: TestServer;
  let api: Api;
  let receiver: Receiver;
  let elsewhere: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    elsewhere = await startReceiver();
    server = await startTestServer({ env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
    const { projectId, key } = await seedProject(server.sql);
    await seedEnvironment(server.sql, projectId, 'staging');
    api = client(server.url, key);
  });

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await elsewhere?.close();
  });

  async function deliverOnce(url: string) {
    const { id } = (await api.post('/api/notification-destinations', { type: 'webhook', url })).body.data.destination;
    const runId = await endedRun(api);
    const [delivery] = await settledDeliveries(api, runId, 1);
    await api.delete(`/api/notification-destinations/${id}`);
    return { delivery, runId };
  }

  it('when the receiver answers 500 with a page, then the delivery says the status in its own words and the page is nowhere in the API or the log', async () => {
    receiver.answerNext(1, { status: 500, body: `${RECEIVER_ERROR_PAGE}: internal stack trace` });
    const { delivery, runId } = await deliverOnce(`${receiver.url}/hook`);
    expect(delivery?.last_error).toBe('the receiver answered HTTP 500');
    const everything = [
      (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).text,
      (await api.get(`/api/test-runs/${runId}`)).text,
      server.logs.join('\n'),
    ].join('\n');
    expect(everything).not.toContain(RECEIVER_ERROR_PAGE);
  });

  it('when the receiver redirects, then the redirect is not followed', async () => {
    receiver.answerNext(1, { status: 302, headers: { location: `${elsewhere.url}/stolen` } });
    const { delivery } = await deliverOnce(`${receiver.url}/hook`);
    expect(delivery?.last_error).toBe('the receiver answered HTTP 302 (redirects are not followed)');
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('when the port is closed or the receiver never answers, then the two errors read the same', async () => {
    const closed = await deliverOnce(`http://127.0.0.1:${await freePort()}/hook`);
    receiver.holdNext(1);
    const silent = await deliverOnce(`${receiver.url}/hook`);
    expect(closed.delivery?.last_error).toBe('no answer from the receiver (the connection failed or timed out)');
    expect(silent.delivery?.last_error).toBe(closed.delivery?.last_error);
  }, 60_000);
});

describe('a name resolved once per request, the address pinned', () => {
  let allowed: Receiver;
  let loopback: Receiver;

  beforeAll(async () => {
    // 127.0.0.2 stands for a public address (the allow list lets it in); 127.0.0.1 is the inside.
    allowed = await startReceiver({ host: '127.0.0.2' });
    loopback = await startReceiver({ host: '127.0.0.1', port: allowed.port });
  });

  afterAll(async () => {
    await allowed?.close();
    await loopback?.close();
  });

  /** A resolver that answers each call with the next of `answers`, counting its calls. */
  function changing(answers: string[][]): Resolver & { calls: number } {
    const resolver = Object.assign(
      async () => {
        const addresses = answers[Math.min(resolver.calls++, answers.length - 1)] as string[];
        return addresses.map((address) => ({ address, family: 4 as const }));
      },
      { calls: 0 },
    );
    return resolver;
  }

  it('when the name answers an allowed address first and loopback after, then the request goes to the first answer only', async () => {
    const resolve = changing([['127.0.0.2'], ['127.0.0.1']]);
    const policy = { allow: parseAllowList('127.0.0.2/32'), resolve };
    for (let i = 0; i < 3; i++) {
      const resolveBefore = resolve.calls;
      const sent = await postToReceiver(`http://rebinding.test:${allowed.port}/hook`, '{}', {}, policy);
      expect(resolve.calls - resolveBefore).toBe(1);
      if (i === 0) expect(sent).toEqual({ ok: true });
      else expect(sent).toMatchObject({ ok: false, permanent: true });
    }
    expect(allowed.requests).toHaveLength(1);
    expect(loopback.requests).toHaveLength(0);
  });

  it('when the name answers an allowed and a loopback address at once, then nothing is sent', async () => {
    const policy = { allow: parseAllowList('127.0.0.2/32'), resolve: changing([['127.0.0.2', '127.0.0.1']]) };
    const sent = await postToReceiver(`http://rebinding.test:${allowed.port}/hook`, '{}', {}, policy);
    expect(sent).toMatchObject({ ok: false, permanent: true });
    expect(allowed.requests).toHaveLength(1);
    expect(loopback.requests).toHaveLength(0);
  });

  it('when the name does not resolve, then the attempt fails and is tried again later', async () => {
    const policy = { allow: parseAllowList(''), resolve: changing([[]]) };
    expect(await postToReceiver('http://nowhere.test/hook', '{}', {}, policy)).toEqual({
      ok: false,
      error: "the receiver's host name did not resolve",
      permanent: false,
    });
  });
});
