import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { freePort, serverProcess, waitForHealth } from '../helpers/process.ts';

// `npm start` as a supervisor runs it: a SIGTERM to npm stops Proctor, and nothing it started
// stays behind (no process, no listener on the port). It runs the built server (server/dist),
// which `npm ci` builds (prepare) and `npm run --silent build --workspaces` rebuilds.

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every process below `pid`, from /proc. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, of] of parents) {
      if (of === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

it('when a supervisor sends SIGTERM to npm start, then the server stops: no process of it remains and nothing listens on its port', async () => {
  expect(fs.existsSync(path.join(ROOT, 'server/dist/main.js')), 'npm run --silent build --workspaces first').toBe(true);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-npm-start-'));
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PROCTOR_DATA_DIR: dataDir,
    PROCTOR_DEMO: 'false',
    PROCTOR_EXECUTOR_CONCURRENCY: '0',
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  // Its own process group, so that a failure here can still end whatever it left.
  const npm = serverProcess(spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
  const pid = npm.child.pid as number;
  let started: number[] = [];
  try {
    await waitForHealth(`http://127.0.0.1:${port}`);
    started = descendantsOf(pid);
    expect(started.length, 'npm start runs the server below npm').toBeGreaterThan(0);
    process.kill(pid, 'SIGTERM');
    await npm.exited;
    await expect.poll(() => started.filter(alive), { timeout: 60_000, interval: 200 }).toEqual([]);
    expect(await listening(port)).toBe(false);
  } finally {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is gone, as it should be
    }
    for (const left of started.filter(alive)) process.kill(left, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);
