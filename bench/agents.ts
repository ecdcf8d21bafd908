// A suite whose spec files take very unequal times (sleeps, so that four processes fit on two
// cores), run twice into one `proctor serve` (its built JavaScript): by Playwright's static
// `--shard=i/4` on 4 processes, then by 4 `proctor agent` processes pulling its units longest first
// by the durations the first run recorded. Playwright's shards split the suite by test count in
// file order, whatever each file takes; the agents' wall time is set against the ideal (the larger
// of the longest file and the total over 4). Targets: agents at most 1.15 × the ideal, and at
// least 30% less time than the static shards.
//
// Then a suite shaped as real ones are: many spec files of a few tests each, whose Playwright
// starts a web server (Playwright's `webServer`: a Node HTTP server that takes about a second to
// listen) and a browser, so that each Playwright start costs seconds. Agents run several units in
// one Playwright; their wall time is set against the ideal counting one start per process (the
// start measured alone, printed), and against the static shards of the same run. Target: at most
// 1.15 × that ideal.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createKey } from '../server/src/auth/store.ts';
import { createProject } from '../server/src/projects/store.ts';
import { freePort, serverProcess } from '../test/helpers/process.ts';
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

/** The real-shaped suite's spec files: three tests each, seconds of sleep per file (218 s in all). */
const REAL_FILES_S = [16, 15, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 3].map(
  (seconds) => seconds * Number(process.env.BENCH_AGENTS_SCALE ?? 1),
);
/** The web server's start: it listens after this long, as an app's dev server does after its build. */
const WEB_SERVER_START_MS = 1000;

interface Suite {
  dir: string;
  /** Seconds of each spec file's tests. */
  files: number[];
  /** Tests in all. */
  tests: number;
}

function writeSuite(): Suite {
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
  return { dir, files: Object.values(FILES_S), tests: Object.keys(FILES_S).length };
}

/** The suite of many files, each Playwright start paying a web server's start and a browser's. */
function writeRealSuite(port: number): Suite {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-agents-real-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'tests'));
  fs.writeFileSync(
    path.join(dir, 'server.mjs'),
    `import http from 'node:http';\nsetTimeout(() => http.createServer((req, res) => res.end('<title>ok</title>')).listen(Number(process.env.PORT), '127.0.0.1'), ${WEB_SERVER_START_MS});\n`,
  );
  const browser = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
  // Each agent its own port (PROCTOR_AGENT_INDEX), each static shard its own (BENCH_SHARD): they share one machine.
  fs.writeFileSync(
    path.join(dir, 'playwright.config.ts'),
    `import { defineConfig } from '@playwright/test';
const port = ${port} + Number(process.env.PROCTOR_AGENT_INDEX ?? process.env.BENCH_SHARD ?? 0);
export default defineConfig({
  testDir: './tests', retries: 0, timeout: 600_000, workers: 1,
  webServer: { command: 'node server.mjs', env: { PORT: String(port) }, url: 'http://127.0.0.1:' + port + '/', reuseExistingServer: false, timeout: 30_000 },
  use: { baseURL: 'http://127.0.0.1:' + port, launchOptions: ${JSON.stringify(browser ? { executablePath: browser } : {})} },
});
`,
  );
  REAL_FILES_S.forEach((seconds, i) => {
    const each = (seconds * 1000) / 3;
    const tests = [1, 2, 3]
      .map(
        (n) =>
          `test('page ${n}', async ({ page }) => {\n  await page.goto('/');\n  await expect(page).toHaveTitle('ok');\n  await page.waitForTimeout(${Math.round(each)});\n});\n`,
      )
      .join('');
    fs.writeFileSync(
      path.join(dir, 'tests', `${String(i + 1).padStart(2, '0')}-${seconds}s.spec.ts`),
      `import { expect, test } from '@playwright/test';\n${tests}`,
    );
  });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return { dir, files: REAL_FILES_S, tests: 3 * REAL_FILES_S.length };
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

interface Bench {
  db: Awaited<ReturnType<typeof benchDatabase>>;
  server: Awaited<ReturnType<typeof benchServerProcess>>;
  key: string;
  cli: string;
  reporter: string;
  workdir: string;
}

/** The suite by static shards, then by agents, in an environment of its own; the seconds of each. */
async function compare(bench: Bench, suite: Suite, environment: string): Promise<{ staticShards: number; agents: number }> {
  const { db, server, key, cli, reporter, workdir } = bench;
  const staticShards = await wallSeconds(
    Array.from({ length: PROCESSES }, (_, i) => ({
      // An output folder each: Playwright empties its own at start.
      args: [cli, 'test', `--shard=${i + 1}/${PROCESSES}`, `--reporter=${reporter}`, `--output=${path.join(suite.dir, `results-${i + 1}`)}`],
      env: {
        PROCTOR_URL: server.url,
        PROCTOR_API_KEY: key,
        PROCTOR_ENVIRONMENT: environment,
        PROCTOR_RUN_KEY: `${environment}-static-shards`,
        BENCH_SHARD: String(i),
      },
    })),
    suite.dir,
  );
  // The agents' plan reads the environment's durations from the first run's rollup.
  await waitForRollups(db.sql, 60_000);
  const runKey = `${environment}-agents`;
  const agents = await wallSeconds(
    Array.from({ length: PROCESSES }, (_, i) => ({
      args: [
        ...[path.join(ROOT, 'server', 'dist', 'bin.js'), 'agent', '--url', server.url, '--environment', environment, '--run-key', runKey],
        ...['--name', `agent-${i + 1}`, '--workspace', suite.dir, '--workdir', workdir],
      ],
      env: { PROCTOR_API_KEY: key },
    })),
    suite.dir,
  );
  const [run] = await db.sql<{ state: string; total_count: number }[]>`select state, total_count from test_runs where run_key = ${runKey}`;
  if (run?.state !== 'passed' || run.total_count !== suite.tests) throw new Error(`the agents' run ended ${JSON.stringify(run)}`);
  return { staticShards, agents };
}

/** One Playwright on the suite's shortest file, alone: its wall time beyond the file's tests is a unit's start. */
async function startSeconds(bench: Bench, suite: Suite): Promise<number> {
  const shortest = fs.readdirSync(path.join(suite.dir, 'tests')).sort().at(-1) as string;
  const wall = await wallSeconds([{ args: [bench.cli, 'test', `tests/${shortest}`, '--reporter=dot'], env: { BENCH_SHARD: String(PROCESSES) } }], suite.dir);
  return Math.max(0, wall - Math.min(...suite.files));
}

function verdict(met: boolean): string {
  return met ? 'met' : 'NOT met';
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/agents needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  const suite = writeSuite();
  const real = writeRealSuite(await freePort());
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-agents-work-'));
  fs.chmodSync(workdir, 0o711);
  try {
    const project = await createProject(db.sql, { name: 'agents', repoUrl: suite.dir, repoName: 'bench/agents' });
    await db.sql`insert into environments (project_id, slug, name) values (${project.id}, 'bench', 'Bench'), (${project.id}, 'bench-real', 'Bench (real-shaped)')`;
    const key = await createKey(db.sql, { projectId: project.id });
    const cli = createRequire(path.join(ROOT, 'package.json')).resolve('@playwright/test/cli');
    const bench: Bench = { db, server, key, cli, reporter: path.join(ROOT, 'reporter', 'dist', 'index.js'), workdir };

    if (process.env.BENCH_AGENTS_SUITES !== 'real') {
      const { staticShards, agents } = await compare(bench, suite, 'bench');
      const seconds = suite.files;
      const ideal = Math.max(Math.max(...seconds), seconds.reduce((a, b) => a + b, 0) / PROCESSES);
      const ofIdeal = agents / ideal;
      const saving = 1 - agents / staticShards;
      console.log(
        `bench/agents: ${seconds.length} spec files of ${seconds.join(', ')} s, ${PROCESSES} processes (ideal ${ideal.toFixed(1)} s: the longest file, or the total over ${PROCESSES})`,
      );
      console.log(`  static --shard=i/${PROCESSES} : ${staticShards.toFixed(1)} s`);
      console.log(
        `  ${PROCESSES} agents           : ${agents.toFixed(1)} s, ${ofIdeal.toFixed(2)} × the ideal (target at most ${IDEAL_TARGET}: ${verdict(ofIdeal <= IDEAL_TARGET)})`,
      );
      console.log(
        `  agents against shards: ${(saving * 100).toFixed(1)}% less time (target at least ${SAVING_TARGET * 100}%: ${verdict(saving >= SAVING_TARGET)})`,
      );
    }

    const start = await startSeconds(bench, real);
    const { staticShards, agents } = await compare(bench, real, 'bench-real');
    const total = real.files.reduce((a, b) => a + b, 0);
    // Every process starts Playwright at least once: the ideal counts one start each.
    const ideal = Math.max(Math.max(...real.files), total / PROCESSES) + start;
    const ofIdeal = agents / ideal;
    console.log(
      `bench/agents (real-shaped): ${real.files.length} spec files of 3 tests, ${total} s of tests, each Playwright starting a web server (${WEB_SERVER_START_MS / 1000} s) and Chromium`,
    );
    console.log(
      `  one unit's start (Playwright, config, web server, browser; measured alone): ${start.toFixed(1)} s, ${(start * real.files.length).toFixed(0)} s if every unit paid it`,
    );
    console.log(`  ideal (the total over ${PROCESSES}, or the longest file, and one start): ${ideal.toFixed(1)} s`);
    console.log(`  static --shard=i/${PROCESSES} : ${staticShards.toFixed(1)} s, ${(staticShards / ideal).toFixed(2)} × the ideal`);
    console.log(
      `  ${PROCESSES} agents           : ${agents.toFixed(1)} s, ${ofIdeal.toFixed(2)} × the ideal (target at most ${IDEAL_TARGET}: ${verdict(ofIdeal <= IDEAL_TARGET)})`,
    );
    const [starts] = await db.sql<{ n: number }[]>`
      select count(distinct s.started_at)::int as n from test_run_shards s join test_runs r on r.id = s.test_run_id where r.run_key = 'bench-real-agents'`;
    if (starts) console.log(`  the agents' Playwright starts: ${starts.n} for ${real.files.length} units`);
  } finally {
    await server.close();
    await db.close();
    for (const dir of [suite.dir, real.dir, workdir]) fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
