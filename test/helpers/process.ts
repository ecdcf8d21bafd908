import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';

export interface ServerProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

/** `proctor <args>` as its own Node process (no npx in between, so signals reach it). */
export function spawnProctor(args: string[], env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/bin.ts', ...args], {
    // One HTTP process unless a test asks for workers: a cluster per test server would only cost start-up CPU.
    env: { ...process.env, LOG_LEVEL: 'warn', PROCTOR_HTTP_WORKERS: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return serverProcess(child);
}

/** A started process with its output collected and its exit awaitable. */
export function serverProcess(child: ChildProcess): ServerProcess {
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

// A server started with tsx on a busy 2-core machine (CI runs two test files at once) takes up to
// half a minute to listen; one that never will has usually exited long before this.
export async function waitForHealth(url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become healthy in ${timeoutMs} ms`);
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The HTTP workers a `proctor serve` process forked: its children running the CLI. */
export function httpWorkersOf(primaryPid: number): number[] {
  const workers: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === primaryPid && /server\/(src|dist)\/bin\.[tj]s/.test(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) workers.push(Number(entry));
    } catch {
      // gone
    }
  }
  return workers.sort((a, b) => a - b);
}
