import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ServerProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

/** `proctor <args>` as its own Node process (no npx in between, so signals reach it). */
export function spawnProctor(args: string[], env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/bin.ts', ...args], {
    // One HTTP process unless a test asks for workers: a cluster per test server would only cost start-up CPU.
    env: { ...process.env, LOG_LEVEL: 'warn', PROCTOR_HTTP_WORKERS: '1', PROCTOR_CHECK_RESPONSES: 'true', ...env },
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

/**
 * `proctor-ci <args>` of the built reporter as a CI job runs it: a clean environment of PATH and the
 * server's URL and key (`env` adds to them), unreachable after 2 s; its output and exit code.
 */
export async function proctorCi(
  args: string[],
  server: { url: string; key: string },
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const main = path.resolve(import.meta.dirname, '../../reporter/dist/cli/main.js');
  const child = spawn(process.execPath, [main, ...args], {
    env: { PATH: process.env.PATH, PROCTOR_URL: server.url, PROCTOR_API_KEY: server.key, PROCTOR_CONNECT_BUDGET_S: '2', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

/**
 * `proctor-ci agent` of the built reporter on a suite's folder as it is (`--workspace`), with a work
 * folder of its own that the runner user can enter (removed after); its exit code and output, at
 * LOG_LEVEL warn.
 */
export async function workspaceAgent(
  server: { url: string; key: string },
  runKey: string,
  dir: string,
  extra: string[] = [],
): Promise<{ code: number | null; output: string }> {
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-agent-work-'));
  fs.chmodSync(workdir, 0o711);
  const main = path.resolve(import.meta.dirname, '../../reporter/dist/cli/main.js');
  // `extra`: more flags, and Playwright's arguments after `--`.
  const args = ['agent', '--url', server.url, '--environment', 'ci', '--run-key', runKey, '--workspace', dir, '--workdir', workdir, ...extra];
  const child = spawn(process.execPath, [main, ...args], {
    env: { ...process.env, PROCTOR_API_KEY: server.key, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const agent = serverProcess(child);
  try {
    return { code: await agent.exited, output: agent.output() };
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true });
  }
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

/** A `proctor serve` started by `serveNode`, healthy. */
export interface ServedNode extends ServerProcess {
  url: string;
  port: number;
  /** Ends it with `signal` (SIGTERM unless told) unless it has ended already; its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `proctor serve` (as `spawnProctor` starts it, `env` added) on a free port, once it answers its
 * health check (`timeoutMs`, as `waitForHealth`'s); one that does not is stopped, and the error
 * carries its output.
 */
export async function serveNode(env: Record<string, string>, timeoutMs?: number): Promise<ServedNode> {
  const port = await freePort();
  const server = spawnProctor(['serve'], { ...env, PORT: String(port) });
  const node: ServedNode = {
    ...server,
    url: `http://127.0.0.1:${port}`,
    port,
    stop: async (signal = 'SIGTERM') => {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal);
      return server.exited;
    },
  };
  try {
    await waitForHealth(node.url, timeoutMs);
  } catch (error) {
    await node.stop();
    throw new Error(`${(error as Error).message}: ${server.output()}`, { cause: error });
  }
  return node;
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
