import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canMakeCluster } from '../helpers/cluster.ts';
import { client } from '../helpers/http.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { canMakeNamespaces, createNetwork, type Host, type HostProcess, type Network } from '../helpers/netns.ts';
import { waitForRun } from '../helpers/runs.ts';
import { haproxyBin, healthy, NODE_PORT, startBalancer, startNode, startPostgres, startS3, waitFor, type HostedPostgres } from './hosts.ts';
import { expectNothingLost, offerShards } from './shards.ts';

// Three Proctor nodes on one database behind HAProxy, as an operator deploys them (docs/self-host.md,
// "Several nodes"): the database, the S3 store, each node and the balancer on a host of its own
// (a network namespace on a bridge). Every node serves every request and shares every kind of
// work; a node killed, or cut from the network, mid-load loses nothing a client was told is stored.

const canRun = canMakeNamespaces && haproxyBin !== null && canMakeCluster;
const LB_PORT = 8080;
const METRICS_PORT = 9464;

let net: Network;
let pg: HostedPostgres;
let sql: postgres.Sql;
const nodeHosts: Host[] = [];
const nodes: HostProcess[] = [];
let nodeEnv: Record<string, string>;
let balancer: HostProcess;
let lbUrl: string;
let key: string;
let loginLink: string;
let webhook: Receiver;

const nodeUrl = (i: number) => `http://${nodeHosts[i]!.address}:${NODE_PORT}`;

beforeAll(async () => {
  if (!canRun) return;
  net = createNetwork();
  const dbHost = net.host('db');
  const s3Host = net.host('s3');
  for (let i = 1; i <= 3; i++) nodeHosts.push(net.host(`node${i}`));
  const lbHost = net.host('lb');
  lbUrl = `http://${lbHost.address}:${LB_PORT}`;
  pg = startPostgres(dbHost);
  sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  const s3 = await startS3(s3Host);
  // A webhook's receiver outside the cluster, on the bridge: the nodes may call it.
  webhook = await startReceiver({ host: net.gateway });
  nodeEnv = {
    PROCTOR_NOTIFY_ALLOW_HOSTS: net.gateway,
    DATABASE_URL: pg.url,
    ...s3.env,
    PUBLIC_URL: lbUrl,
    PROCTOR_HTTP_WORKERS: '1',
    PROCTOR_EXECUTOR_CONCURRENCY: '1',
    PROCTOR_EXECUTOR_POLL_MS: '300',
    // Each node's sweeper (schedules, silent runs, digests) every second, all three on the same work.
    PROCTOR_SWEEP_INTERVAL_S: '1',
    // A node that dies mid-run is seen lost after 5 s of silence, and its run goes to another node.
    PROCTOR_LOST_RUN_S: '5',
    // Each node's retention pass every 1.2 s, all three on the same expired runs.
    PROCTOR_RETENTION_INTERVAL_MIN: '0.02',
    PROCTOR_METRICS_PORT: String(METRICS_PORT),
    PROCTOR_METRICS_HOST: '0.0.0.0',
  };
  // All three at once on the empty database: they migrate and seed the demo once between them.
  for (const host of nodeHosts) nodes.push(startNode(host, nodeEnv));
  await Promise.all(
    nodeHosts.map((_, i) =>
      waitFor(
        () => healthy(nodeUrl(i)),
        120_000,
        () => `node ${i + 1}: ${nodes[i]!.output()}`,
      ),
    ),
  );
  balancer = startBalancer(lbHost, nodeHosts, LB_PORT);
  await waitFor(
    () => healthy(lbUrl),
    30_000,
    () => `the balancer: ${balancer.output()}`,
  );
  const seeding = nodes.map((node) => node.output()).filter((output) => output.includes('Demo project created'));
  expect(seeding).toHaveLength(1);
  key = /prc_p_[0-9a-f_]+/.exec(seeding[0]!)![0];
  loginLink = /\/sign-in\/link\?token=[\w-]+/.exec(seeding[0]!)![0];
  const destination = await client(lbUrl, key).post('/api/notification-destinations', { type: 'webhook', url: `${webhook.url}/hook`, when: 'always' });
  expect(destination.status, destination.text).toBe(201);
}, 300_000);

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await webhook?.close();
  for (const node of nodes) node.kill('SIGKILL');
  balancer?.kill('SIGKILL');
  pg?.destroy();
  net?.destroy();
});

// CI must run it: a machine that cannot make the cluster fails there rather than skipping quietly.
it.runIf(process.env.CI === 'true')('when CI runs, then this machine can make the cluster: namespaces, HAProxy and PostgreSQL', () => {
  expect({ canMakeNamespaces, haproxy: haproxyBin, canMakeCluster }).toEqual({ canMakeNamespaces: true, haproxy: expect.any(String), canMakeCluster: true });
});

describe.skipIf(!canRun)('three nodes on one database behind HAProxy', () => {
  it('when the nodes started at once on an empty database, then one seeded the demo, and its key and session work on every node', async () => {
    const [{ count }] = (await sql`select count(*)::int as count from projects`) as unknown as [{ count: number }];
    expect(count).toBe(1);
    for (let i = 0; i < 3; i++) expect((await client(nodeUrl(i), key).get('/api/environments')).status, `node ${i + 1}`).toBe(200);
    // Signed in on node 1; the session and its CSRF token read and act on nodes 2 and 3.
    const signIn = await fetch(`${nodeUrl(0)}${loginLink}`, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const page = await fetch(`${nodeUrl(1)}/projects/1/runs`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1];
    expect(csrf).toBeTruthy();
    const made = await fetch(`${nodeUrl(2)}/api/environments`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf!, 'x-project-id': '1', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Made on node 3', slug: 'node-three' }),
    });
    expect(made.status, await made.text()).toBe(201);
  });

  it('when three runs are triggered through the balancer, then each is executed once, and its signed links open on another node', async () => {
    const api = client(lbUrl, key);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await api.put('/api/test-runs', { environment: 'local' });
      expect(answer.status, answer.text).toBe(200);
      ids.push(answer.body.data.test_run.id);
    }
    const attempts: number[] = [];
    for (const id of ids) {
      const run = await waitForRun(api, id, ['passed', 'failed', 'error', 'cancelled'], 240_000);
      expect(run.testRun.state, JSON.stringify(run.testRun)).toBe('failed');
      const [{ n }] = (await sql`select count(*)::int as n from test_results where test_run_id = ${id}`) as unknown as [{ n: number }];
      attempts.push(n);
    }
    // The same suite, so the same attempts in each run; each run claimed by one executor, and the
    // three idle nodes took one run each (a node executes one run at a time here).
    expect(new Set(attempts).size).toBe(1);
    expect(attempts[0]).toBeGreaterThan(0);
    const claimedBy = await sql<{ claimed_by: string }[]>`select distinct claimed_by from test_runs where id in ${sql(ids)}`;
    expect(claimedBy).toHaveLength(3);
    // The run's page for people, signed by one node, opens on another.
    const read = await client(nodeUrl(0), key).get(`/api/test-runs/${ids[0]}`);
    const summary = new URL(read.body.data.test_run.testRun.summary_url as string);
    const elsewhere = await fetch(`${nodeUrl(2)}${summary.pathname}${summary.search}`);
    expect(elsewhere.status).toBe(200);
    // An attachment's signed link, handed out by node 1, is read through node 2 from the shared bucket.
    const details = read.body.data.test_run.flattenedSummaryDetails as { attachments?: { url: string; size_bytes: number }[] }[];
    const attachment = details.flatMap((d) => d.attachments ?? [])[0];
    expect(attachment).toBeDefined();
    const link = new URL(attachment!.url);
    const bytes = await fetch(`${nodeUrl(1)}${link.pathname}${link.search}`);
    expect(bytes.status).toBe(200);
    expect((await bytes.arrayBuffer()).byteLength).toBe(attachment!.size_bytes);
  }, 300_000);

  it('when a node is killed mid-load, then every result a client was told is stored is stored once, and every run ends with its counts', async () => {
    const load = offerShards(lbUrl, key, { runs: 6, shardsPerRun: 5, testsPerShard: 40, batchMs: 300, batchSize: 5 }, 'killed');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    nodes[1]!.kill('SIGKILL');
    const offered = await load;
    const figures = await expectNothingLost(sql, offered);
    console.log(
      `node killed: ${offered.requests} requests, ${offered.retried} retried, ${offered.failed.length} failed, ` +
        `${figures.acknowledged} results acknowledged, lost: ${figures.lost}, doubled: ${figures.doubled}`,
    );
    // The node comes back and takes requests again.
    nodes[1] = startNode(nodeHosts[1]!, nodeEnv);
    await waitFor(
      () => healthy(nodeUrl(1)),
      120_000,
      () => `node 2 back: ${nodes[1]!.output()}`,
    );
  }, 300_000);

  it('when a node is cut from the network mid-load and brought back, then nothing a client was told is stored is lost', async () => {
    const load = offerShards(lbUrl, key, { runs: 6, shardsPerRun: 5, testsPerShard: 40, batchMs: 300, batchSize: 5 }, 'unplugged');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    nodeHosts[2]!.unplug();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    nodeHosts[2]!.plug();
    const offered = await load;
    const figures = await expectNothingLost(sql, offered);
    console.log(
      `node cut off: ${offered.requests} requests, ${offered.retried} retried, ${offered.failed.length} failed, ` +
        `${figures.acknowledged} results acknowledged, lost: ${figures.lost}, doubled: ${figures.doubled}`,
    );
    await waitFor(
      () => healthy(nodeUrl(2)),
      60_000,
      () => 'node 3 reachable again',
    );
  }, 300_000);

  it("when the node executing a run dies, then another node's executor finishes the run, each test once", async () => {
    const api = client(lbUrl, key);
    const answer = await api.put('/api/test-runs', { environment: 'local' });
    expect(answer.status, answer.text).toBe(200);
    const runId = answer.body.data.test_run.id as number;
    await waitFor(
      async () => (await sql`select 1 from test_results where test_run_id = ${runId} and is_final`).length >= 1,
      180_000,
      () => 'a first result of the run',
    );
    const [{ claimed_by }] = (await sql`select claimed_by from test_runs where id = ${runId}`) as unknown as [{ claimed_by: string }];
    // The executor's id is host:pid:random; the node is the host whose namespace holds that pid.
    const pid = claimed_by.split(':')[1]!;
    const namespace = execFileSync('ip', ['netns', 'identify', pid], { encoding: 'utf8' }).trim();
    const index = nodeHosts.findIndex((host) => host.namespace === namespace);
    expect(index, `${claimed_by} in ${namespace}`).toBeGreaterThanOrEqual(0);
    const kept = await sql<{ test_case_id: string; started_at: Date | null }[]>`
      select test_case_id, started_at from test_results where test_run_id = ${runId} and is_final`;
    nodeHosts[index]!.die();
    const run = await waitForRun(api, runId, ['passed', 'failed', 'error', 'cancelled'], 240_000);
    expect(run.testRun.state, JSON.stringify(run.testRun)).toBe('failed');
    const [{ executions, by }] = (await sql`select executions, claimed_by as by from test_runs where id = ${runId}`) as unknown as [
      { executions: number; by: string },
    ];
    expect(executions).toBe(2);
    expect(by).not.toBe(claimed_by);
    // Each test ends once, and what the dead node stored stayed as it was.
    const finals = await sql<{ test_case_id: string; started_at: Date | null }[]>`
      select test_case_id, started_at from test_results where test_run_id = ${runId} and is_final`;
    expect(new Set(finals.map((row) => row.test_case_id)).size).toBe(finals.length);
    for (const row of kept) expect(finals.find((f) => f.test_case_id === row.test_case_id)?.started_at?.getTime()).toBe(row.started_at?.getTime());
    nodes[index] = startNode(nodeHosts[index]!, nodeEnv);
    await waitFor(
      () => healthy(nodeUrl(index)),
      120_000,
      () => `node ${index + 1} back: ${nodes[index]!.output()}`,
    );
  }, 420_000);

  it('when every run has ended, then the webhook was told of each once, whichever node ended it', async () => {
    const ended = await sql<{ id: number }[]>`select id from test_runs where run_ended_at is not null`;
    expect(ended.length).toBe(16);
    const eventsOf = () => {
      const byRun = new Map<number, Set<string>>();
      for (const request of webhook.requests) {
        const event = JSON.parse(request.body) as { id: string; test_run: { id: number } };
        const ids = byRun.get(event.test_run.id) ?? new Set<string>();
        ids.add(String(request.headers['x-proctor-delivery']));
        byRun.set(event.test_run.id, ids);
      }
      return byRun;
    };
    await waitFor(
      () => eventsOf().size >= ended.length,
      60_000,
      () => `webhooks for ${ended.length} runs, got ${eventsOf().size}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const byRun = eventsOf();
    expect([...byRun.keys()].sort((a, b) => a - b)).toEqual(ended.map((run) => run.id).sort((a, b) => a - b));
    for (const [runId, events] of byRun) expect(events.size, `run ${runId}: one event`).toBe(1);
    console.log(`webhook: ${webhook.requests.length} requests for ${byRun.size} runs`);
  }, 120_000);

  it('when a schedule comes due, then the three nodes make one run of its tick between them', async () => {
    const api = client(lbUrl, key);
    const made = await api.post('/api/environments', { name: 'Every minute', slug: 'every-minute', scheduled_trigger: '* * * * *' });
    expect(made.status, made.text).toBe(201);
    const environmentId = made.body.data.environment.id as number;
    const scheduled = () => sql<{ id: number; scheduled_for: Date }[]>`
      select id, scheduled_for from test_runs where environment_id = ${environmentId} and origin = 'schedule'`;
    await waitFor(
      async () => (await scheduled()).length > 0,
      90_000,
      () => 'the scheduled run',
    );
    // Every node's sweeper sees the tick due for the next few seconds.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await api.patch(`/api/environments/${environmentId}`, { scheduled_trigger: null })).status).toBe(200);
    const runs = await scheduled();
    for (const run of runs) await api.post(`/api/test-runs/${run.id}/cancel`, { reason: 'the test needs the tick, not the run' });
    expect(runs).toHaveLength(1);
  }, 120_000);

  it("when runs expire, then the three nodes' retention passes delete each run's results once between them", async () => {
    // The node-killed load's six runs made 100 days old (the default policy keeps results 90 days).
    const expired = await sql<{ id: number }[]>`
      update test_runs set created_at = created_at - interval '100 days', run_ended_at = run_ended_at - interval '100 days'
      where run_key like 'killed-%' returning id`;
    expect(expired).toHaveLength(6);
    const ids = expired.map((run) => run.id);
    await waitFor(
      async () => (await sql`select 1 from test_runs where id in ${sql(ids)} and details_deleted_at is not null`).length === ids.length,
      60_000,
      () => 'the expired runs deleted',
    );
    // A few more passes of every node, which find nothing left to delete.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const [{ left }] = (await sql`select count(*)::int as left from test_results where test_run_id in ${sql(ids)}`) as unknown as [{ left: number }];
    expect(left).toBe(0);
    const deletedBy: number[] = [];
    for (const host of nodeHosts) {
      const text = await (await fetch(`http://${host.address}:${METRICS_PORT}/metrics`)).text();
      const line = /^proctor_retention_runs_deleted_total\{kind="results"\} (\d+)/m.exec(text);
      deletedBy.push(Number(line?.[1] ?? 0));
    }
    expect(
      deletedBy.reduce((a, b) => a + b, 0),
      `runs deleted by each node: ${deletedBy.join(', ')}`,
    ).toBe(ids.length);
    console.log(`retention: ${ids.length} expired runs, deleted by the nodes ${deletedBy.join(' + ')}`);
  }, 120_000);
});
