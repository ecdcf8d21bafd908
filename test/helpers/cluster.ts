import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './process.ts';

/** Debian's PostgreSQL binaries (initdb, pg_ctl), newest major first; null where none is installed. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const majors = fs.readdirSync(root).sort((a, b) => Number(b) - Number(a));
  const found = majors.map((major) => path.join(root, major, 'bin')).find((bin) => fs.existsSync(path.join(bin, 'initdb')));
  return found ?? null;
}

export const canMakeCluster = postgresBin() !== null;

/**
 * A PostgreSQL cluster of the test's own, made with initdb on a free port, which the test may stop
 * and start: never the shared server. Runs as the `postgres` user when the tests run as root.
 */
export interface PrivateCluster {
  url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

export async function createPrivateCluster(): Promise<PrivateCluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries in /usr/lib/postgresql');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-cluster-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (tool: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : path.join(bin, tool), asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args, {
      stdio: 'pipe',
      cwd: dir,
    });
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: () => {
      try {
        stop();
      } catch {
        // already stopped
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
