// Fail fast's stop latency (issue 56, point 2: every agent stops within seconds): two real
// `proctor-ci agent`s with the default lease (30 s: a heartbeat every 10 s) run one run with
// `--max-failures 1`, each a real Playwright (Chromium). One fails a test while the other is in a
// slow test, whose reporter has nothing to send: the other hears the cancel from its check of the
// run's state each second, not at its heartbeat, and stops within 3 s of the cancel the server
// recorded, its Playwright and browsers gone.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { recordingSuite } from '../helpers/recording-suite.ts';
import { serverProcess, type ServerProcess } from '../helpers/process.ts';
import { runProcesses } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

/** How long a slow test takes: the run would take at least this. */
const SLOW_MS = 240_000;
/** The most an agent may take to stop after the cancel. */
const STOP_MS = 3000;

const FILES: Record<string, string> = {
  'playwright.config.ts': `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({ testDir: './tests', retries: 0, timeout: 600_000, workers: 4, fullyParallel: true, use: { launchOptions: executablePath ? { executablePath } : {} } });
`,
  // Every test says it started, by its agent's place; the failing one waits until both agents run
  // tests (and a moment more, so that the other's slow tests are under way in their browsers).
  'tests/mark.mjs': `import fs from 'node:fs';
import path from 'node:path';
export function started(testInfo) {
  fs.writeFileSync(path.join(process.env.RECORD_DIR, 'started-' + process.env.PROCTOR_AGENT_INDEX + '-' + testInfo.title), '');
}
export async function bothAgents() {
  for (let waited = 0; waited < 120_000; waited += 200) {
    const agents = new Set(fs.readdirSync(process.env.RECORD_DIR).filter((f) => f.startsWith('started-')).map((f) => f.split('-')[1]));
    if (agents.size >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
`,
  'tests/checkout.spec.ts': `import { expect, test } from '@playwright/test';
import { bothAgents, started } from './mark.mjs';
test('checkout pays', async ({ page }, testInfo) => {
  started(testInfo);
  await bothAgents();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await page.setContent('<h1>Out of stock</h1>');
  await expect(page.locator('h1')).toHaveText('Paid', { timeout: 500 });
});
`,
  'tests/slow.spec.ts': `import fs from 'node:fs';
import path from 'node:path';
import { test } from '@playwright/test';
import { started } from './mark.mjs';
for (const n of [1, 2, 3, 4]) {
  test(\`slow \${n}\`, async ({ page }, testInfo) => {
    started(testInfo);
    await page.setContent('<h1>Waiting</h1>');
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
  // The default lease: an agent's heartbeat comes every 10 s, too late for fail fast's stop.
  server = await startTestServer({ clock: new TestClock('live'), env: { PROCTOR_AGENT_LEASE_S: '30' } });
  ({ repo, records, key } = await recordingSuite(server.sql, 'failstop', FILES));
  api = client(server.url, key);
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-failstop-work-'));
  fs.chmodSync(workdir, 0o711);
});
afterAll(async () => {
  for (const agent of agents) agent.child.kill('SIGKILL');
  await server?.close();
  for (const dir of [repo, records, workdir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** `proctor-ci agent` (the reporter package's built bin), in a process group of its own; `exitedAt`: when it exited. */
function startAgent(args: string[]): ServerProcess & { exitedAt: Promise<number> } {
  const child = spawn(process.execPath, [path.resolve('reporter/dist/cli/main.js'), 'agent', '--url', server.url, ...args], {
    env: { ...process.env, PROCTOR_API_KEY: key, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exitedAt = new Promise<number>((resolve) => child.on('exit', () => resolve(Date.now())));
  const agent = serverProcess(child);
  agents.push(agent);
  return { ...agent, exitedAt };
}

describe('fail fast stops every agent within seconds', () => {
  it('when two agents run with --max-failures 1 and the default 30 s lease and one fails a test while the other is in a slow test, then both agents exit within 3 s of the recorded cancel, their Playwright processes gone', async () => {
    const runKey = 'failstop-agents';
    const args = ['--environment', 'ci', '--run-key', runKey, '--max-failures', '1', '--workdir', workdir];
    const both = [startAgent([...args, '--name', 'a']), startAgent([...args, '--name', 'b'])];
    const codes = await Promise.all(both.map((agent) => agent.exited));
    const exits = await Promise.all(both.map((agent) => agent.exitedAt));
    const output = both.map((agent) => agent.output()).join('\n');
    expect(codes, output).toEqual([0, 0]);
    const [row] = await server.sql<{ id: number; run_ended_at: Date }[]>`select id, run_ended_at from test_runs where run_key = ${runKey}`;
    const run = (await api.get(`/api/test-runs/${row?.id}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'cancelled', cancelled_by: 'max_failures', max_failures: 1 });
    expect(run.cancel_reason).toContain('checkout pays');
    // Both agents ran tests: the one that did not fail was in a slow test, none of which ended.
    const started = fs.readdirSync(records).filter((name) => name.startsWith('started-'));
    const failing = started.find((name) => name.endsWith('-checkout pays'))?.split('-')[1];
    const others = new Set(started.filter((name) => name.split('-')[1] !== failing && name.includes('-slow ')).map((name) => name.split('-')[1]));
    expect(others.size, started.join(', ')).toBeGreaterThanOrEqual(1);
    expect(fs.readdirSync(records).filter((name) => name.startsWith('finished-'))).toEqual([]);
    const cancelledAt = (row?.run_ended_at as Date).getTime();
    const latencies = exits.map((at) => at - cancelledAt);
    console.log(`fail fast stop: agents exited ${latencies.map((ms) => `${ms} ms`).join(' and ')} after the recorded cancel`);
    for (const ms of latencies) expect(ms, output).toBeLessThan(STOP_MS);
    expect(runProcesses(server.url, row?.id as number), 'no process of the run left').toEqual([]);
  });
});
