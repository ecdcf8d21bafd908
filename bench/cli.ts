// The time of the `proctor` commands a person runs by hand, from the built package as `npx proctor`
// runs it (node server/dist/bin.js), on an existing data directory (the embedded database, which the
// command starts itself), on one that a running server holds (the command goes through its socket)
// and, when DATABASE_URL is set, on PostgreSQL; against `node -e ''` measured
// in the same run, rounds interleaved. Target: each command's median under 1 s (issue #52).
// Needs the build: `npm run --silent build --workspaces`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, serverProcess, waitForHealth } from '../test/helpers/process.ts';
import { benchDatabase, type BenchDatabase, median } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 5);
const TARGET_MS = 1000;
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'server/dist/bin.js');

/** One run of `node args`, its wall time in milliseconds; a failed command fails the bench. */
function timed(args: string[], env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return { ms, stdout: run.stdout.trim() };
}

interface Target {
  label: string;
  env: NodeJS.ProcessEnv;
}

/** A project and a person to act on, made with the command itself (not timed). */
function prepare(env: NodeJS.ProcessEnv): { projectId: string; email: string } {
  const proctor = (...args: string[]) => execFileSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' }).trim();
  const email = `bench-${process.pid}-${Date.now()}@example.com`;
  const projectId = proctor('project', 'create', '--name', 'Bench CLI');
  proctor('user', 'create', '--email', email, '--name', 'Bench Person');
  return { projectId, email };
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run --silent build --workspaces first`);
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn' };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-cli-'));
  // The same, with `proctor serve` running on it: a command then goes through the server's socket.
  const servedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-cli-served-'));
  const port = await freePort();
  const served = serverProcess(
    spawn(process.execPath, [BIN, 'serve'], {
      env: { ...base, PROCTOR_DATA_DIR: servedDir, PORT: String(port), HOST: '127.0.0.1', PROCTOR_DEMO: 'false', PROCTOR_EXECUTOR_CONCURRENCY: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  await waitForHealth(`http://127.0.0.1:${port}`).catch((error: unknown) => {
    served.child.kill('SIGTERM');
    throw error;
  });
  const targets: Target[] = [
    { label: 'embedded', env: { ...base, PROCTOR_DATA_DIR: dataDir } },
    { label: 'embedded, server up', env: { ...base, PROCTOR_DATA_DIR: servedDir } },
  ];
  let db: BenchDatabase | null = null;
  if (process.env.DATABASE_URL) {
    db = await benchDatabase();
    targets.push({ label: 'PostgreSQL', env: { ...base, DATABASE_URL: db.url } });
  }
  let missed = false;
  try {
    const rows: { label: string; times: number[] }[] = [];
    const baseline: number[] = [];
    const prepared = targets.map((target) => ({ target, ...prepare(target.env) }));
    const commands = prepared.flatMap(({ target, projectId, email }) => {
      let invited = 0;
      return [
        { label: `${target.label}: key create`, args: () => ['key', 'create', '--project', projectId, '--scope', 'report'], env: target.env },
        { label: `${target.label}: user login-link`, args: () => ['user', 'login-link', '--email', email], env: target.env },
        // Each run adds someone new (an invitation: the address has no account yet).
        {
          label: `${target.label}: member add`,
          args: () => ['member', 'add', '--project', projectId, '--email', `added-${invited++}@example.com`],
          env: target.env,
        },
      ];
    });
    for (const command of commands) rows.push({ label: command.label, times: [] });
    for (let round = 0; round < ROUNDS; round++) {
      baseline.push(timed(['-e', ''], base).ms);
      commands.forEach((command, i) => rows[i]?.times.push(timed([BIN, ...command.args()], command.env).ms));
    }
    const fmt = (times: number[]) => times.map((t) => Math.round(t)).join(', ');
    const width = Math.max(...rows.map((row) => row.label.length), "node -e ''".length);
    console.log(
      `bench/cli: node server/dist/bin.js (as npx proctor runs it), ${ROUNDS} interleaved rounds, ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}`,
    );
    console.log(`  ${"node -e ''".padEnd(width)} : median ${Math.round(median(baseline))} ms (rounds: ${fmt(baseline)})`);
    for (const row of rows) {
      const ms = median(row.times);
      const met = ms < TARGET_MS;
      missed ||= !met;
      console.log(
        `  ${row.label.padEnd(width)} : median ${Math.round(ms)} ms (rounds: ${fmt(row.times)}) target < ${TARGET_MS} ms: ${met ? 'met' : 'NOT met'}`,
      );
    }
  } finally {
    await db?.close();
    served.child.kill('SIGTERM');
    await served.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(servedDir, { recursive: true, force: true });
  }
  // As the other timing benches: a miss is printed as a finding, for the issue, not a failed CI.
  if (missed) console.log(`bench/cli: a command took ${TARGET_MS} ms or more (NOT met)`);
}

await main();
