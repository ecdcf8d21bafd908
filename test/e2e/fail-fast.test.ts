// Fail fast (issue 56, point 2) with real runners: two `proctor-ci agent`s on one run, and a run
// the server's executor runs in two shards, each with a real Playwright (Chromium) on a suite whose
// slow tests would take minutes. Once two tests failed, the run is cancelled by `max_failures` with
// a reason that names them, and every runner stops: long before a slow test could end.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { recordingSuite } from '../helpers/recording-suite.ts';
import { serverProcess, type ServerProcess } from '../helpers/process.ts';
import { ROOT, reporterEnv, runSampleSuite } from '../helpers/playwright.ts';
import { runProcesses, trigger, waitForRun, waitUntil } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

/** How long a slow test takes: the suite would take at least this. */
const SLOW_MS = 240_000;

/**
 * Every test says it started (by its runner: the agent's index, or the shard); the failing ones
 * wait until both runners run tests, so that the stop reaches two Playwrights under way.
 */
const MARK = `import fs from 'node:fs';
import path from 'node:path';
export function runnerOf(testInfo) {
  return process.env.PROCTOR_AGENT_INDEX ?? String(testInfo.config.shard?.current ?? 1);
}
export function started(testInfo) {
  fs.writeFileSync(path.join(process.env.RECORD_DIR, 'started-' + runnerOf(testInfo) + '-' + testInfo.title), '');
}
export async function bothRunners() {
  for (let waited = 0; waited < 60_000; waited += 200) {
    const runners = new Set(fs.readdirSync(process.env.RECORD_DIR).filter((f) => f.startsWith('started-')).map((f) => f.split('-')[1]));
    if (runners.size >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
`;

const FILES: Record<string, string> = {
  'playwright.config.ts': `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({ testDir: './tests', retries: 0, timeout: 600_000, workers: 4, fullyParallel: true, use: { launchOptions: executablePath ? { executablePath } : {} } });
`,
  'tests/mark.mjs': MARK,
  'tests/checkout.spec.ts': `import { expect, test } from '@playwright/test';
import { bothRunners, started } from './mark.mjs';
for (const step of ['pays', 'ships']) {
  test(\`checkout \${step}\`, async ({ page }, testInfo) => {
    started(testInfo);
    await bothRunners();
    await page.setContent('<h1>Out of stock</h1>');
    await expect(page.locator('h1')).toHaveText('Paid', { timeout: 500 });
  });
}
`,
  'tests/slow.spec.ts': `import fs from 'node:fs';
import path from 'node:path';
import { test } from '@playwright/test';
import { started } from './mark.mjs';
for (const n of [1, 2, 3, 4]) {
  test(\`slow \${n}\`, async ({}, testInfo) => {
    started(testInfo);
    await new Promise((resolve) => setTimeout(resolve, ${SLOW_MS}));
    fs.writeFileSync(path.join(process.env.RECORD_DIR, 'finished-' + testInfo.title), '');
  });
}
`,
  '.gitignore': 'node_modules/\ntest-results/\n',
};

let server: TestServer;
let api: ReturnType<typeof client>;
let key: string;
let repo: string;
let records: string;
let workdir: string;
const agents: ServerProcess[] = [];

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_AGENT_LEASE_S: '6', PROCTOR_EXECUTOR_CONCURRENCY: '1' } });
  ({ repo, records, key } = await recordingSuite(server.sql, 'failfast', FILES));
  api = client(server.url, key);
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-failfast-work-'));
  fs.chmodSync(workdir, 0o711);
});
afterAll(async () => {
  for (const agent of agents) agent.child.kill('SIGKILL');
  await server?.close();
  for (const dir of [repo, records, workdir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Milliseconds since the first test of the run began (its start marker): the checkouts and installs before it are not the stop's. */
function sinceFirstTest(): number {
  const starts = fs
    .readdirSync(records)
    .filter((name) => name.startsWith('started-'))
    .map((name) => fs.statSync(path.join(records, name)).mtimeMs);
  return Date.now() - Math.min(...starts);
}

function clearRecords(): void {
  for (const name of fs.readdirSync(records)) fs.rmSync(path.join(records, name));
}

/** `proctor-ci agent` (the reporter package's built bin), in a process group of its own. */
function startAgent(args: string[]): ServerProcess {
  const child = spawn(process.execPath, [path.resolve('reporter/dist/cli/main.js'), 'agent', '--url', server.url, ...args], {
    env: { ...process.env, PROCTOR_API_KEY: key, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const agent = serverProcess(child);
  agents.push(agent);
  return agent;
}

/** The run stopped by its two failures: cancelled by max_failures, its reason naming both, and no slow test ended. */
function expectStoppedByFailures(run: { state: string; cancelled_by: string | null; cancel_reason: string | null; max_failures: number | null }): void {
  expect(run).toMatchObject({ state: 'cancelled', cancelled_by: 'max_failures', max_failures: 2 });
  expect(run.cancel_reason).toMatch(/^stopped after 2 failed tests \(max_failures 2\): /);
  expect(run.cancel_reason).toContain('checkout pays');
  expect(run.cancel_reason).toContain('checkout ships');
  expect(fs.readdirSync(records).filter((name) => name.startsWith('finished-'))).toEqual([]);
}

describe('fail fast with real runners', () => {
  it('when two agents run one run with --max-failures 2 and two tests fail, then the run is cancelled naming them and both agents stop their Playwright long before a slow test ends', async () => {
    clearRecords();
    const runKey = 'failfast-agents';
    const args = ['--environment', 'ci', '--run-key', runKey, '--max-failures', '2', '--workdir', workdir];
    const both = [startAgent([...args, '--name', 'a']), startAgent([...args, '--name', 'b'])];
    const codes = await Promise.all(both.map((agent) => agent.exited));
    const elapsed = sinceFirstTest();
    const output = both.map((agent) => agent.output()).join('\n');
    expect(codes, output).toEqual([0, 0]);
    // Both ran tests of the run, and both stopped: well before a slow test's end.
    const runners = new Set(
      fs
        .readdirSync(records)
        .filter((name) => name.startsWith('started-'))
        .map((name) => name.split('-')[1]),
    );
    // Two places at least: a join the client retried under load takes a place of its own (a join is
    // not idempotent yet: seen in CI, index 2 beside 0 and 1).
    expect(runners.size, output).toBeGreaterThanOrEqual(2);
    expect(elapsed, output).toBeLessThan(SLOW_MS / 2);
    for (const agent of both) expect(agent.output()).toMatch(/^proctor-ci agent: run \d+ has ended \(cancelled\)/m);
    const [row] = await server.sql<{ id: number }[]>`select id from test_runs where run_key = ${runKey}`;
    const run = (await api.get(`/api/test-runs/${row?.id}`)).body.data.test_run.testRun;
    expectStoppedByFailures(run);
  });

  it('when a plain `playwright test` with the reporter and PROCTOR_MAX_FAILURES 1 meets a failure, then the reporter says the run was stopped and Playwright ends interrupted, non-zero, before its slow test', async () => {
    // Under the repository, where its Playwright resolves.
    fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    const suite = fs.mkdtempSync(path.join(ROOT, '.tmp', 'failfast-reporter-'));
    try {
      fs.writeFileSync(path.join(suite, 'playwright.config.ts'), FILES['playwright.config.ts'] as string);
      fs.mkdirSync(path.join(suite, 'tests'));
      fs.writeFileSync(
        path.join(suite, 'tests', 'stop.spec.ts'),
        `import { expect, test } from '@playwright/test';
test('checkout pays', async () => { expect(1).toBe(2); });
test('slow one', async () => { await new Promise((resolve) => setTimeout(resolve, ${SLOW_MS})); });
`,
      );
      const started = Date.now();
      const run = await runSampleSuite({
        cwd: suite,
        env: { ...reporterEnv(server.url, key, 'ci'), PROCTOR_MAX_FAILURES: '1', PROCTOR_RUN_KEY: 'failfast-reporter' },
      });
      expect(Date.now() - started, run.output).toBeLessThan(SLOW_MS / 2);
      expect(run.exitCode, run.output).not.toBe(0);
      expect(run.output).toContain('[proctor] the run has ended (cancelled) by fail fast');
      expect(run.recorded.find((attempt) => attempt.title === 'slow one')?.status ?? 'interrupted').not.toBe('passed');
      const [row] = await server.sql<{ id: number }[]>`select id from test_runs where max_failures = 1 order by id desc limit 1`;
      const stopped = (await api.get(`/api/test-runs/${row?.id}`)).body.data.test_run.testRun;
      expect(stopped).toMatchObject({ state: 'cancelled', cancelled_by: 'max_failures', max_failures: 1 });
      expect(stopped.cancel_reason).toContain('checkout pays');
    } finally {
      fs.rmSync(suite, { recursive: true, force: true });
    }
  });

  it('when a run is triggered in two shards with max_failures 2 and two tests fail, then the run is cancelled naming them and both shards stop long before a slow test ends', async () => {
    clearRecords();
    const runId = await trigger(api, { environment: 'ci', total_shards: 2, max_failures: 2 });
    const run = (await waitForRun(api, runId, ['passed', 'failed', 'error', 'cancelled'], SLOW_MS)).testRun;
    expectStoppedByFailures(run);
    const runners = new Set(
      fs
        .readdirSync(records)
        .filter((name) => name.startsWith('started-'))
        .map((name) => name.split('-')[1]),
    );
    expect(runners).toEqual(new Set(['1', '2']));
    // The executor's Playwright processes of the run are gone, not left running.
    await waitUntil(() => runProcesses(server.url, runId).length === 0, 15_000, 'no process of the run left');
    expect(sinceFirstTest()).toBeLessThan(SLOW_MS / 2);
  });
});
