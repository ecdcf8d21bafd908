import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Host, HostProcess } from '../helpers/netns.ts';
import { ROOT } from '../helpers/playwright.ts';
import { haproxyBin, waitFor } from './hosts.ts';

// A database that outlives its machine, as docs/self-host.md ("A standby database") deploys it:
// etcd, a Patroni (with its PostgreSQL) on each of two database hosts with
// deploy/patroni/patroni.yml, and HAProxy sending connections to whichever is primary with
// deploy/haproxy/postgres.cfg.

export const etcdBin = ['/usr/bin/etcd'].find((bin) => fs.existsSync(bin)) ?? null;
export const patroniBin = ['/usr/bin/patroni'].find((bin) => fs.existsSync(bin)) ?? null;

export const PATRONI_PORT = 8008;
export const DB_PASSWORD = 'proctor-failover';
const PG_PORT = 5432;

/** etcd, one member, on `host`: where the Patronis keep the primary's lease. */
export async function startEtcd(host: Host): Promise<{ process: HostProcess; endpoint: string; dir: string }> {
  if (!etcdBin) throw new Error('no etcd: apt-get install etcd-server');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-cluster-etcd-'));
  const client = `http://${host.address}:2379`;
  const peer = `http://${host.address}:2380`;
  const running = host.spawn(etcdBin, [
    '--name=etcd1',
    `--data-dir=${path.join(dir, 'data')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=etcd1=${peer}`,
    '--initial-cluster-state=new',
    '--log-level=warn',
  ]);
  await waitFor(
    async () => (await fetch(`${client}/health`, { signal: AbortSignal.timeout(2000) })).ok,
    30_000,
    () => `etcd on ${host.name}: ${running.output()}`,
  );
  return { process: running, endpoint: `${host.address}:2379`, dir };
}

export interface PatroniMember {
  name: string;
  host: Host;
  process: HostProcess;
  api: string;
  dir: string;
}

/**
 * Patroni on `host` with deploy/patroni/patroni.yml as it is, but for the socket folder: the
 * database hosts of the test share one machine's /var/run/postgresql, so each has a folder of its own.
 * Given the folder of a member that died, it starts again on that member's data.
 */
export function startPatroni(host: Host, name: string, etcd: string, again?: string): PatroniMember {
  if (!patroniBin) throw new Error('no patroni: apt-get install patroni');
  const dir = again ?? fs.mkdtempSync(path.join(os.tmpdir(), `proctor-cluster-${name}-`));
  const sockets = path.join(dir, 'sockets');
  fs.mkdirSync(sockets, { recursive: true });
  const shipped = fs.readFileSync(path.join(ROOT, 'deploy/patroni/patroni.yml'), 'utf8');
  const config = shipped.replace('unix_socket_directories: /var/run/postgresql', `unix_socket_directories: ${sockets}`);
  if (config === shipped) throw new Error('deploy/patroni/patroni.yml no longer names /var/run/postgresql');
  fs.writeFileSync(path.join(dir, 'patroni.yml'), config);
  execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const api = `${host.address}:${PATRONI_PORT}`;
  const running = host.spawn('runuser', ['-u', 'postgres', '--', patroniBin, path.join(dir, 'patroni.yml')], {
    PATRONI_NAME: name,
    PATRONI_RESTAPI_LISTEN: api,
    PATRONI_RESTAPI_CONNECT_ADDRESS: api,
    PATRONI_POSTGRESQL_LISTEN: `${host.address}:${PG_PORT}`,
    PATRONI_POSTGRESQL_CONNECT_ADDRESS: `${host.address}:${PG_PORT}`,
    PATRONI_POSTGRESQL_DATA_DIR: path.join(dir, 'data'),
    PATRONI_POSTGRESQL_PGPASS: path.join(dir, 'pgpass'),
    PATRONI_ETCD3_HOSTS: etcd,
    PATRONI_SUPERUSER_PASSWORD: DB_PASSWORD,
    PATRONI_REPLICATION_PASSWORD: DB_PASSWORD,
    PATRONI_LOG_LEVEL: 'WARNING',
  });
  return { name, host, process: running, api: `http://${api}`, dir };
}

/** The status Patroni's REST API gives `check` (`/primary`, `/sync`, ...): 200 when it is so. */
export async function patroniSays(member: PatroniMember, check: string): Promise<boolean> {
  const response = await fetch(`${member.api}${check}`, { signal: AbortSignal.timeout(2000) });
  await response.arrayBuffer();
  return response.status === 200;
}

/**
 * HAProxy on `host` with deploy/haproxy/haproxy.cfg in front of `nodes` on `port`, and
 * deploy/haproxy/postgres.cfg in front of the database members on `dbPort`.
 */
export function startBalancerWithDatabase(host: Host, nodes: string[], port: number, members: Host[], dbPort: number): HostProcess {
  if (!haproxyBin) throw new Error('no haproxy: apt-get install haproxy');
  const env: Record<string, string> = { PROCTOR_LISTEN: `${host.address}:${port}`, PROCTOR_DB_LISTEN: `${host.address}:${dbPort}` };
  // haproxy.cfg names three nodes: a cluster of fewer names one twice.
  for (let i = 0; i < 3; i++) env[`PROCTOR_NODE_${i + 1}`] = nodes[i % nodes.length]!;
  members.forEach((member, i) => (env[`PROCTOR_PG_${i + 1}`] = `${member.address}:${PG_PORT}`));
  return host.spawn(haproxyBin, ['-db', '-f', path.join(ROOT, 'deploy/haproxy/haproxy.cfg'), '-f', path.join(ROOT, 'deploy/haproxy/postgres.cfg')], env);
}
