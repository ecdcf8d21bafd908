import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { createKey } from '../server/src/auth/store.ts';
import { loadConfig } from '../server/src/config.ts';
import type { Sql } from '../server/src/db.ts';
import { createLogger } from '../server/src/logger.ts';
import { createProject } from '../server/src/projects/store.ts';
import { FileStorage } from '../server/src/storage/blobs.ts';
import { serveInProcess } from '../test/helpers/app.ts';
import { embeddedDatabase, throwawayDatabase } from '../test/helpers/database.ts';
import { freePort, httpWorkersOf, serverProcess, waitForHealth } from '../test/helpers/process.ts';
import { ASSETS_DIR, buildDashboardAssets } from '../server/scripts/build-dashboard.mjs';

export interface BenchDatabase {
  url: string;
  sql: Sql;
  close(): Promise<void>;
}

/** A throwaway database: on DATABASE_URL when set (as in CI), else an embedded one. */
export async function benchDatabase(): Promise<BenchDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  if (adminUrl) {
    // BENCH_KEEP_DATABASE=1 leaves it for EXPLAIN ANALYZE after the run.
    const db = await throwawayDatabase(adminUrl, { prefix: 'proctor_bench', keep: process.env.BENCH_KEEP_DATABASE === '1' });
    return { url: db.url, sql: db.sql, close: db.drop };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-'));
  const db = await embeddedDatabase({ dataDir: dir, maxConnections: 4 });
  return {
    url: db.url,
    sql: db.sql,
    close: async () => {
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Writes back what the bench's own loading left dirty, the OS's page cache and PostgreSQL's
 * buffers (about 180 MB after bench/ingest's preload), so that it is not written back during the
 * timed part, where it would slow the commits of whichever path happened to be running.
 */
export async function settleWrites(sql: Sql): Promise<void> {
  execFileSync('sync');
  // CHECKPOINT needs a superuser or pg_checkpoint: without one, PostgreSQL's buffers stay as they are.
  await sql`checkpoint`.catch(() => undefined);
}

export interface BenchServer {
  url: string;
  /** The server's first process, when it runs in one of its own. */
  pid?: number;
  /** What that process printed (warnings and errors), when it runs in one of its own. */
  output?(): string;
  close(): Promise<void>;
}

export async function benchServer(db: BenchDatabase): Promise<BenchServer> {
  // The pages link the dashboard's bundled script and stylesheet: built from the sources, as the tests' setup does.
  if (!fs.existsSync(path.join(ASSETS_DIR, 'manifest.json'))) await buildDashboardAssets();
  const config = loadConfig({ PORT: '0', DATABASE_URL: db.url, PROCTOR_SIGNING_SECRET: 'bench-signing-secret-0123456789', LOG_LEVEL: 'silent' });
  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-files-'));
  const served = await serveInProcess({
    sql: db.sql,
    config,
    logger: createLogger('silent'),
    clock: () => new Date(),
    signingSecret: config.signingSecret as string,
    storage: new FileStorage(filesDir),
  });
  return {
    url: served.url,
    close: async () => {
      await served.close();
      fs.rmSync(filesDir, { recursive: true, force: true });
    },
  };
}

let built = false;

/** The server's JavaScript as its package ships it (`server/dist`), built from the sources once per bench. */
function builtServer(): string {
  if (!built) execFileSync('npm', ['run', '--silent', 'build:server'], { stdio: 'inherit' });
  built = true;
  return 'server/dist/bin.js';
}

/**
 * `proctor serve` as its own process, as it runs in production (the package's built JavaScript, no
 * TypeScript loader): the bench's client, standing in for the reporter's process, then does not
 * share the server's event loop, and the memory read off the processes is production's.
 */
export async function benchServerProcess(db: BenchDatabase, env: Record<string, string> = {}, extraNodeFlags: string[] = []): Promise<BenchServer> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-data-'));
  // BENCH_SERVER_NODE_FLAGS: Node's flags for the server and its workers, `--cpu-prof` to profile it under the bench's load.
  const nodeFlags = [...(process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean), ...extraNodeFlags];
  const child = spawn(process.execPath, [...nodeFlags, builtServer(), 'serve'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      PROCTOR_DATA_DIR: dataDir,
      PROCTOR_SIGNING_SECRET: 'bench-signing-secret-0123456789',
      PROCTOR_DEMO: 'false',
      PROCTOR_EXECUTOR_CONCURRENCY: '0',
      // As `proctor serve` runs by default: an HTTP worker per core.
      PROCTOR_HTTP_WORKERS: 'auto',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const server = serverProcess(child);
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${server.output()}`);
  });
  return {
    url,
    pid: child.pid,
    output: () => server.output(),
    close: async () => {
      child.kill('SIGTERM');
      await server.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function benchProject(sql: Sql, slug = 'bench'): Promise<{ projectId: number; key: string; environmentId: number }> {
  const project = await createProject(sql, { name: 'Bench', repoUrl: '/nonexistent', repoName: 'bench/bench' });
  const [environment] = await sql<{ id: number }[]>`
    insert into environments (project_id, slug, name) values (${project.id}, ${slug}, ${slug}) returning id`;
  return { projectId: project.id, key: await createKey(sql, { projectId: project.id }), environmentId: (environment as { id: number }).id };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The Hodges–Lehmann estimate of a paired difference: the median of the means of every two pairs
 * (each pair with itself too). As robust to a stray pair as the median, and it uses the rest of the
 * pairs almost as well as their mean does.
 */
export function hodgesLehmann(differences: number[]): number {
  const walshAverages: number[] = [];
  for (let i = 0; i < differences.length; i++) {
    for (let j = i; j < differences.length; j++) walshAverages.push(((differences[i] as number) + (differences[j] as number)) / 2);
  }
  return median(walshAverages);
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export function testIdOf(n: number): string {
  return `${n.toString(16).padStart(20, '0')}-${'b'.repeat(20)}`;
}

/** Peak memory, sampled: the largest sum of every process's resident memory, and each one's own peak (VmHWM). */
export function watchMemory(primaryPid: number) {
  let peakSum = 0;
  const peaks = new Map<number, number>();
  const residentKb = (pid: number, field: 'VmRSS' | 'VmHWM') => {
    try {
      return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return 0;
    }
  };
  const sample = () => {
    const pids = [primaryPid, ...httpWorkersOf(primaryPid)];
    peakSum = Math.max(
      peakSum,
      pids.reduce((sum, pid) => sum + residentKb(pid, 'VmRSS'), 0),
    );
    for (const pid of pids) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, residentKb(pid, 'VmHWM')));
  };
  // A sampler never keeps the bench alive: a bench whose request failed before stop() still exits.
  const timer = setInterval(sample, 200);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { peakSumMb: peakSum / 1024, peaksMb: [...peaks.values()].map((kb) => kb / 1024) };
    },
  };
}
