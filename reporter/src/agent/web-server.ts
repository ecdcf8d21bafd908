// `--share-web-server`: the agents of one machine share the suite's web servers (its config's
// `webServer`). Each unit is a Playwright process of its own, which would start the server and stop
// it at its end, while another agent's unit still uses it; so the server is started once per
// machine by the first agent that needs it, outside any unit, and held until the last agent of the
// machine that uses it is done. Every unit then finds it up, and reuses it because the suite's
// config allows it (`reuseExistingServer`, true when PROCTOR_SHARE_WEB_SERVER is set).
//
// The agents of a machine meet in a folder named after the server's URL (or port) under the
// system's temporary folder: `users/<pid>` for each agent using it, `holder/` made (atomically)
// by the one that starts it, and `lock/` held while one registers or the holder decides to stop.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ListedWebServer } from '../reporter/list.ts';
import { type Runner, runnerSpawnOptions } from '../toolchain/sandbox.ts';

export class WebServerError extends Error {}

interface Held {
  server: ListedWebServer;
  folder: string;
  /** The process this agent started, or null when another agent (or anyone) serves it. */
  child: ChildProcess | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid written in a folder of the meeting; 0 when not written yet, or the folder is gone. */
function pidIn(folder: string): number {
  try {
    return Number(fs.readFileSync(path.join(folder, 'pid'), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

/** What Playwright waits for: the URL answering below 404 (its own test), else the port accepting. */
export async function isServing(server: Pick<ListedWebServer, 'url' | 'port'>): Promise<boolean> {
  if (server.url) {
    try {
      const response = await fetch(server.url, { redirect: 'manual', signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 404;
    } catch {
      return false;
    }
  }
  if (server.port === null) return false;
  const connects = (host: string) =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect({ host, port: server.port as number });
      socket.setTimeout(2000);
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => resolve(false));
    }).finally(() => undefined);
  return (await connects('127.0.0.1')) || (await connects('::1'));
}

/** Holds `lock/` while `act` runs: registering a user and the holder's decision to stop never cross. */
async function withLock<T>(folder: string, act: () => T | Promise<T>): Promise<T> {
  const lock = path.join(folder, 'lock');
  for (let tries = 0; ; tries++) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = pidIn(lock);
      // A lock left by an agent that died holding it.
      if ((owner > 0 && !alive(owner)) || tries > 300) fs.rmSync(lock, { recursive: true, force: true });
      await sleep(50);
    }
  }
  try {
    return await act();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function meetingFolder(server: ListedWebServer): string {
  const target = server.url ?? `port:${server.port}`;
  const folder = path.join(os.tmpdir(), `proctor-web-server-${createHash('sha256').update(target).digest('hex').slice(0, 16)}`);
  fs.mkdirSync(path.join(folder, 'users'), { recursive: true, mode: 0o700 });
  return folder;
}

/**
 * Makes sure the suite's web server is up for this agent's units: uses the one running, or starts
 * it when no other agent of the machine is starting it. `env` is the units' environment.
 */
export async function shareWebServer(server: ListedWebServer, dir: string, env: NodeJS.ProcessEnv, runner: Runner, log: (line: string) => void): Promise<Held> {
  const folder = meetingFolder(server);
  await withLock(folder, () => fs.writeFileSync(path.join(folder, 'users', String(process.pid)), ''));
  const holder = path.join(folder, 'holder');
  const deadline = Date.now() + Math.max(server.timeout, 5000);
  while (Date.now() < deadline) {
    if (await isServing(server)) return { server, folder, child: null };
    try {
      fs.mkdirSync(holder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = pidIn(holder);
      // Another agent is starting it; one that died before it served leaves the start to this one.
      if (pid > 0 && !alive(pid)) fs.rmSync(holder, { recursive: true, force: true });
      await sleep(200);
      continue;
    }
    fs.writeFileSync(path.join(holder, 'pid'), String(process.pid));
    if (!server.command) throw new WebServerError("--share-web-server: the config's webServer has no command to start");
    log(`starting the suite's web server for the agents of this machine: ${server.command}`);
    const child = spawn(server.command, {
      ...runnerSpawnOptions(runner),
      shell: true,
      cwd: server.cwd || dir,
      env: { BROWSER: 'none', ...env, ...server.env },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    let exited: number | null | undefined;
    child.once('exit', (code) => (exited = code));
    while (Date.now() < deadline) {
      if (exited !== undefined) {
        fs.rmSync(holder, { recursive: true, force: true });
        throw new WebServerError(
          `--share-web-server: the suite's web server (${server.command}) exited with code ${exited} before it served: ${stderr.trim()}`,
        );
      }
      if (await isServing(server)) return { server, folder, child };
      await sleep(100);
    }
    stopGroup(child);
    fs.rmSync(holder, { recursive: true, force: true });
    break;
  }
  throw new WebServerError(`--share-web-server: the suite's web server did not serve ${server.url ?? `port ${server.port}`} within ${server.timeout} ms`);
}

function stopGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGTERM');
  } catch {
    // gone
  }
}

/**
 * This agent is done with the server. The agent that started it waits until no other agent of the
 * machine uses it, then stops it.
 */
export async function releaseWebServer(held: Held): Promise<void> {
  const users = path.join(held.folder, 'users');
  const others = () => fs.readdirSync(users).filter((name) => Number(name) !== process.pid && alive(Number(name)));
  if (!held.child) {
    await withLock(held.folder, () => fs.rmSync(path.join(users, String(process.pid)), { force: true }));
    return;
  }
  for (;;) {
    const stopped = await withLock(held.folder, () => {
      if (others().length > 0) return false;
      fs.rmSync(path.join(users, String(process.pid)), { force: true });
      stopGroup(held.child as ChildProcess);
      fs.rmSync(path.join(held.folder, 'holder'), { recursive: true, force: true });
      return true;
    });
    if (stopped) break;
    await sleep(500);
  }
  const child = held.child;
  if (child.exitCode === null && child.signalCode === null) {
    await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(10_000)]);
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
