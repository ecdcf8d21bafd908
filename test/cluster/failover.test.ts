import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { canMakeNamespaces, createNetwork, type Host, type HostProcess, type Network } from '../helpers/netns.ts';
import { haproxyBin, healthy, NODE_PORT, startNode, startS3, waitFor } from './hosts.ts';
import { expectNothingLost as nothingLost, offerShards, type Offered } from './shards.ts';
import { DB_PASSWORD, etcdBin, patroniBin, patroniSays, startBalancerWithDatabase, startEtcd, startPatroni, type PatroniMember } from './standby.ts';

// The database's machine lost mid-load (docs/self-host.md, "A standby database"): PostgreSQL on
// two hosts, the standby synchronous, Patroni with etcd deciding which is primary, and HAProxy
// sending the nodes' connections to it. The primary's host dies (every process of it killed at
// once); Patroni promotes the standby, the nodes reconnect through HAProxy by themselves, and
// every result a client was told is stored is there, once.

const canRun = canMakeNamespaces && haproxyBin !== null && etcdBin !== null && patroniBin !== null;
const LB_PORT = 8080;
const DB_PORT = 5000;

let net: Network;
let etcdDir: string;
let etcdEndpoint: string;
const members: PatroniMember[] = [];
const nodes: HostProcess[] = [];
let balancer: HostProcess;
let dbUrl: string;
let lbUrl: string;
let key: string;

const stored = () => postgres(dbUrl, { max: 1, onnotice: () => {}, connect_timeout: 2, idle_timeout: 1 });

beforeAll(async () => {
  if (!canRun) return;
  net = createNetwork();
  const etcdHost = net.host('etcd');
  const dbHosts = [net.host('pg1'), net.host('pg2')];
  const s3Host = net.host('s3');
  const nodeHosts: Host[] = [net.host('node1'), net.host('node2')];
  const lbHost = net.host('lb');
  lbUrl = `http://${lbHost.address}:${LB_PORT}`;
  dbUrl = `postgres://postgres:${DB_PASSWORD}@${lbHost.address}:${DB_PORT}/postgres`;
  const etcd = await startEtcd(etcdHost);
  etcdDir = etcd.dir;
  etcdEndpoint = etcd.endpoint;
  // pg1 first, so that it is the primary, then pg2, which copies it and follows as its synchronous standby.
  members.push(startPatroni(dbHosts[0]!, 'pg1', etcd.endpoint));
  await waitFor(
    () => patroniSays(members[0]!, '/primary'),
    90_000,
    () => `pg1 primary: ${members[0]!.process.output()}`,
  );
  members.push(startPatroni(dbHosts[1]!, 'pg2', etcd.endpoint));
  await waitFor(
    () => patroniSays(members[1]!, '/sync'),
    90_000,
    () => `pg2 synchronous standby: ${members[1]!.process.output()}`,
  );
  const s3 = await startS3(s3Host);
  balancer = startBalancerWithDatabase(
    lbHost,
    nodeHosts.map((host) => `${host.address}:${NODE_PORT}`),
    LB_PORT,
    dbHosts,
    DB_PORT,
  );
  const env = { DATABASE_URL: dbUrl, ...s3.env, PUBLIC_URL: lbUrl, PROCTOR_HTTP_WORKERS: '1', PROCTOR_EXECUTOR_CONCURRENCY: '1' };
  for (const host of nodeHosts) nodes.push(startNode(host, env));
  await Promise.all(
    nodeHosts.map((host, i) =>
      waitFor(
        () => healthy(`http://${host.address}:${NODE_PORT}`),
        120_000,
        () => `node ${i + 1}: ${nodes[i]!.output()}`,
      ),
    ),
  );
  await waitFor(
    () => healthy(lbUrl),
    30_000,
    () => `the balancer: ${balancer.output()}`,
  );
  const seeding = nodes.map((node) => node.output()).find((output) => output.includes('Demo project created'));
  key = /prc_p_[0-9a-f_]+/.exec(seeding ?? '')![0];
}, 300_000);

afterAll(() => {
  for (const node of nodes) node.kill('SIGKILL');
  balancer?.kill('SIGKILL');
  for (const member of members) member.process.kill('SIGKILL');
  net?.destroy();
  for (const dir of [etcdDir, ...members.map((member) => member.dir)]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Writes through the balancer every 100 ms until stopped: the longest time between two that were
 * committed is the time without writes.
 */
function probeWrites(): { stop(): Promise<number> } {
  let running = true;
  let longest = 0;
  const done = (async () => {
    const sql = stored();
    await sql`create table if not exists failover_probe (at timestamptz not null)`;
    let last = Date.now();
    while (running) {
      try {
        await sql`insert into failover_probe values (now())`;
        const now = Date.now();
        longest = Math.max(longest, now - last);
        last = now;
      } catch {
        // not now: the primary is gone and no standby promoted yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await sql.end({ timeout: 1 }).catch(() => undefined);
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return longest;
    },
  };
}

/** What shards.ts's check finds, on the database as it is now. */
async function expectNothingLost(offered: Offered): Promise<{ acknowledged: number; rows: number; lost: number; doubled: number }> {
  const sql = stored();
  try {
    return await nothingLost(sql, offered);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

// CI must run it: a machine that cannot make the cluster fails there rather than skipping quietly.
it.runIf(process.env.CI === 'true')('when CI runs, then this machine can make the standby: namespaces, HAProxy, etcd and Patroni', () => {
  expect({ canMakeNamespaces, haproxy: haproxyBin, etcd: etcdBin, patroni: patroniBin }).toEqual({
    canMakeNamespaces: true,
    haproxy: expect.any(String),
    etcd: expect.any(String),
    patroni: expect.any(String),
  });
});

describe.skipIf(!canRun)('PostgreSQL with a synchronous standby under Patroni, behind HAProxy', () => {
  it("when the primary's host dies mid-load, then the standby is promoted, the nodes reconnect, and every acknowledged result is stored once", async () => {
    const sql = stored();
    const [replication] = await sql<{ application_name: string; sync_state: string }[]>`
      select application_name, sync_state from pg_stat_replication`;
    const [settings] = await sql<{ commit: string; standbys: string }[]>`
      select current_setting('synchronous_commit') as commit, current_setting('synchronous_standby_names') as standbys`;
    await sql.end({ timeout: 1 });
    // A commit is acknowledged once pg2 has it on disk.
    expect(replication).toEqual({ application_name: 'pg2', sync_state: 'sync' });
    expect(settings!.commit).toBe('on');
    expect(settings!.standbys).toMatch(/pg2/);

    const probe = probeWrites();
    const load = offerShards(lbUrl, key, { runs: 4, shardsPerRun: 4, testsPerShard: 40, batchMs: 400, batchSize: 5 }, 'failover');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const killedAt = Date.now();
    members[0]!.host.die();
    await waitFor(
      () => patroniSays(members[1]!, '/primary'),
      60_000,
      () => `pg2 promoted: ${members[1]!.process.output()}`,
    );
    const promotedAt = Date.now();
    const offered = await load;
    const gap = await probe.stop();
    // On a failure, the nodes' first errors say why.
    if (offered.failed.length > 0)
      for (const node of nodes)
        console.log(
          node
            .output()
            .split('\n')
            .filter((line) => line.includes('"level":50'))
            .slice(0, 3)
            .join('\n'),
        );
    const figures = await expectNothingLost(offered);
    expect(figures.rows).toBe(figures.acknowledged);
    console.log(
      `primary's host died: promoted after ${((promotedAt - killedAt) / 1000).toFixed(1)} s, no write for ${(gap / 1000).toFixed(1)} s; ` +
        `${offered.requests} requests, ${offered.retried} retried, ${offered.failed.length} failed; ` +
        `${figures.acknowledged} results acknowledged, ${figures.rows} stored, lost: ${figures.lost}, doubled: ${figures.doubled}`,
    );
  }, 240_000);

  it("when the dead primary's host comes back, then it follows the new primary as its synchronous standby, with every row", async () => {
    const [old] = members;
    members[0] = startPatroni(old!.host, 'pg1', etcdEndpoint, old!.dir);
    await waitFor(
      () => patroniSays(members[0]!, '/sync'),
      90_000,
      () => `pg1 back as the synchronous standby: ${members[0]!.process.output()}`,
    );
    const primary = stored();
    const standby = postgres(`postgres://postgres:${DB_PASSWORD}@${old!.host.address}:5432/postgres`, { max: 1, onnotice: () => {} });
    try {
      const [replication] = await primary<{ application_name: string; sync_state: string }[]>`
        select application_name, sync_state from pg_stat_replication`;
      expect(replication).toEqual({ application_name: 'pg1', sync_state: 'sync' });
      // A commit now waits for pg1; once replayed, pg1 reads what the primary holds.
      await primary`insert into failover_probe values (now())`;
      const count = async (sql: postgres.Sql) => ((await sql`select count(*)::int as n from test_results`) as unknown as [{ n: number }])[0].n;
      const expected = await count(primary);
      await waitFor(
        async () => (await count(standby)) === expected,
        30_000,
        () => `pg1 to replay ${expected} results`,
      );
    } finally {
      await primary.end({ timeout: 1 });
      await standby.end({ timeout: 1 });
    }
  }, 120_000);
});
