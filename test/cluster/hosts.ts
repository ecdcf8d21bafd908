import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postgresBin } from '../helpers/cluster.ts';
import type { Host, HostProcess } from '../helpers/netns.ts';
import { ROOT } from '../helpers/playwright.ts';

// The parts of a cluster as an operator runs them, each on a host (a namespace) of its own:
// PostgreSQL, an S3 store, Proctor's nodes (the built `proctor serve`) and HAProxy with the
// configuration that ships in deploy/haproxy/.

export const haproxyBin = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((bin) => fs.existsSync(bin)) ?? null;

const PG_PORT = 5432;

export interface HostedPostgres {
  url: string;
  stop(): void;
  destroy(): void;
}

/** A PostgreSQL cluster of the test's own on `host`, taking connections from the hosts' subnet. */
export function startPostgres(host: Host): HostedPostgres {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries in /usr/lib/postgresql');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-cluster-db-'));
  execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const asPostgres = (tool: string, args: string[]) => ['-u', 'postgres', '--', path.join(bin, tool), ...args];
  execFileSync('runuser', asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']), { stdio: 'pipe' });
  fs.appendFileSync(path.join(data, 'pg_hba.conf'), `host all all ${host.address.replace(/\.\d+$/, '.0')}/24 trust\n`);
  // As docs/self-host.md sets it: a node cut off mid-transaction has its connections dropped (and
  // its locks released) after 11 s of silence, not the system's two hours.
  const options = `-p ${PG_PORT} -k ${dir} -c listen_addresses=${host.address} -c max_connections=200 -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3`;
  host.run('runuser', asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']));
  const stop = () => spawnSync('runuser', asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
  return {
    url: `postgres://postgres@${host.address}:${PG_PORT}/postgres`,
    stop,
    destroy: () => {
      stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HostedS3 {
  env: Record<string, string>;
  process: HostProcess;
}

/** s3rver (an S3-compatible store) on `host`, with one bucket. */
export async function startS3(host: Host): Promise<HostedS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-cluster-s3-'));
  const running = host.spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/cluster/s3-host.ts'), host.address, '4569', directory, 'proctor'], {});
  await waitFor(
    () => running.output().includes('s3 ready'),
    30_000,
    () => `s3rver on ${host.name}: ${running.output()}`,
  );
  return {
    process: running,
    env: {
      PROCTOR_S3_BUCKET: 'proctor',
      PROCTOR_S3_ENDPOINT: `http://${host.address}:4569`,
      PROCTOR_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
  };
}

export const NODE_PORT = 3000;

/** `proctor serve` from the built server on `host`, listening on all of the host's interfaces. */
export function startNode(host: Host, env: Record<string, string>): HostProcess {
  return host.spawn(process.execPath, [path.join(ROOT, 'server/dist/bin.js'), 'serve'], {
    LOG_LEVEL: 'warn',
    PORT: String(NODE_PORT),
    HOST: '0.0.0.0',
    ...env,
  });
}

/** HAProxy on `host` with deploy/haproxy/haproxy.cfg, in front of `nodes`. */
export function startBalancer(host: Host, nodes: Host[], port: number): HostProcess {
  if (!haproxyBin) throw new Error('no haproxy: apt-get install haproxy');
  const env: Record<string, string> = { PROCTOR_LISTEN: `${host.address}:${port}` };
  nodes.forEach((node, i) => (env[`PROCTOR_NODE_${i + 1}`] = `${node.address}:${NODE_PORT}`));
  return host.spawn(haproxyBin, ['-db', '-f', path.join(ROOT, 'deploy/haproxy/haproxy.cfg')], env);
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** 200 from the node's /healthz, asked from the test's own namespace through the bridge. */
export async function healthy(url: string): Promise<boolean> {
  const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
  return response.status === 200;
}
