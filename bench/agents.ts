// A suite whose spec files take very unequal times (sleeps, so that four processes fit on two
// cores), run twice into one `proctor serve` (its built JavaScript): by Playwright's static
// `--shard=i/4` on 4 processes, then by 4 `proctor agent` processes pulling its units longest first
// by the durations the first run recorded. Playwright's shards split the suite by test count in
// file order, whatever each file takes; the agents' wall time is set against the ideal (the larger
// of the longest file and the total over 4). Targets: agents at most 1.15 × the ideal, and at
// least 30% less time than the static shards.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createKey } from '../server/src/auth/store.ts';
import { createProject } from '../server/src/projects/store.ts';
import { serverProcess } from '../test/helpers/process.ts';
import { waitForRollups } from '../test/helpers/runs.ts';
import { benchDatabase, benchServerProcess } from './lib.ts';

const PROCESSES = 4;
/**
 * Each spec file's one test, seconds of sleep: 240 s in all, the longest 60 s, so the ideal is 60 s
 * (long beside the seconds each Playwright process takes to start, as a real suite's files are).
 */
const FILES_S = Object.fromEntries(
  [60, 45, 36, 30, 24, 15, 15, 9, 6].map((seconds, i) => [
    `${String.fromCharCode(97 + i)}-${seconds}s.spec.ts`,
    seconds * Number(process.env.BENCH_AGENTS_SCALE ?? 1),
  ]),
);
const IDEAL_TARGET = 1.15;
const SAVING_TARGET = 0.3;
const ROOT = path.resolve(import.meta.dirname, '..');

function writeSuite(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-agents-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'tests'));
  fs.writeFileSync(
    path.join(dir, 'playwright.config.ts'),
    `import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: './tests', retries: 0, timeout: 600_000, workers: 1 });\n`,
  );
  for (const [file, seconds] of Object.entries(FILES_S)) {
    fs.writeFileSync(
      path.join(dir, 'tests', file),
      `import { test } from '@playwright/test';\ntest('sleeps ${seconds} s', async () => { await new Promise((resolve) => setTimeout(resolve, ${seconds * 1000})); });\n`,
    );
  }
  // As a CI job's workspace: the suite's dependencies installed beside it.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Starts every process at once; resolves with the seconds until the last exited, failing if one did not exit 0. */
async function wallSeconds(commands: { args: string[]; env: Record<string, string> }[], cwd: string): Promise<number> {
  const started = performance.now();
  const processes = commands.map(({ args, env }) =>
    serverProcess(
      spawn(process.execPath, args, {
        cwd,
        env: { ...process.env, LOG_LEVEL: process.env.BENCH_AGENTS_VERBOSE ? 'info' : 'warn', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ),
  );
  const codes = await Promise.all(processes.map((p) => p.exited));
  const seconds = (performance.now() - started) / 1000;
  if (process.env.BENCH_AGENTS_VERBOSE) for (const p of processes) console.log(`started at ${Date.now() - (performance.now() - started)}\n${p.output()}`);
  codes.forEach((code, i) => {
    // Playwright's shards exit 0 here: every test passes.
    if (code !== 0) throw new Error(`process ${i + 1} exited ${code}:\n${processes[i]?.output().slice(-2000)}`);
  });
  return seconds;
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/agents needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  const suite = writeSuite();
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-agents-work-'));
  fs.chmodSync(workdir, 0o711);
  try {
    const project = await createProject(db.sql, { name: 'agents', repoUrl: suite, repoName: 'bench/agents' });
    await db.sql`insert into environments (project_id, slug, name) values (${project.id}, 'bench', 'Bench')`;
    const key = await createKey(db.sql, { projectId: project.id });
    const cli = createRequire(path.join(ROOT, 'package.json')).resolve('@playwright/test/cli');
    const reporter = path.join(ROOT, 'reporter', 'dist', 'index.js');

    const staticShards = await wallSeconds(
      Array.from({ length: PROCESSES }, (_, i) => ({
        // An output folder each: Playwright empties its own at start.
        args: [cli, 'test', `--shard=${i + 1}/${PROCESSES}`, `--reporter=${reporter}`, `--output=${path.join(suite, `results-${i + 1}`)}`],
        env: { PROCTOR_URL: server.url, PROCTOR_API_KEY: key, PROCTOR_ENVIRONMENT: 'bench', PROCTOR_RUN_KEY: 'static-shards' },
      })),
      suite,
    );
    // The agents' plan reads the environment's durations from the first run's rollup.
    await waitForRollups(db.sql, 60_000);
    const agents = await wallSeconds(
      Array.from({ length: PROCESSES }, (_, i) => ({
        args: [
          path.join(ROOT, 'server', 'dist', 'bin.js'),
          'agent',
          '--url',
          server.url,
          '--environment',
          'bench',
          '--run-key',
          'agents',
          '--name',
          `agent-${i + 1}`,
          '--workspace',
          suite,
          '--workdir',
          workdir,
        ],
        env: { PROCTOR_API_KEY: key },
      })),
      suite,
    );

    const [run] = await db.sql<{ state: string; total_count: number }[]>`select state, total_count from test_runs where run_key = 'agents'`;
    if (run?.state !== 'passed' || run.total_count !== Object.keys(FILES_S).length) throw new Error(`the agents' run ended ${JSON.stringify(run)}`);
    const seconds = Object.values(FILES_S);
    const ideal = Math.max(Math.max(...seconds), seconds.reduce((a, b) => a + b, 0) / PROCESSES);
    const ofIdeal = agents / ideal;
    const saving = 1 - agents / staticShards;
    console.log(
      `bench/agents: ${seconds.length} spec files of ${seconds.join(', ')} s, ${PROCESSES} processes (ideal ${ideal.toFixed(1)} s: the longest file, or the total over ${PROCESSES})`,
    );
    console.log(`  static --shard=i/${PROCESSES} : ${staticShards.toFixed(1)} s`);
    console.log(
      `  ${PROCESSES} agents           : ${agents.toFixed(1)} s, ${ofIdeal.toFixed(2)} × the ideal (target at most ${IDEAL_TARGET}: ${ofIdeal <= IDEAL_TARGET ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  agents against shards: ${(saving * 100).toFixed(1)}% less time (target at least ${SAVING_TARGET * 100}%: ${saving >= SAVING_TARGET ? 'met' : 'NOT met'})`,
    );
  } finally {
    await server.close();
    await db.close();
    fs.rmSync(suite, { recursive: true, force: true });
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}

await main();
