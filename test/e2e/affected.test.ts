import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResultJson } from '../../reporter/src/cli/run.ts';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { trigger, waitForRun } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// Affected runs (issue 56, point 3) in real Playwright with Debian's Chromium: a suite in a git
// repository whose helper module two specs import; the executor asks Playwright's --only-changed.

const CONFIG = `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({
  testDir: './tests',
  retries: 0,
  use: { launchOptions: executablePath ? { executablePath } : {} },
  projects: [{ name: 'alpha' }],
});
`;

const SPECS: Record<string, string> = {
  'tests/helper.ts': `export const greeting = 'Hello';\n`,
  'tests/a.spec.ts': `import { expect, test } from '@playwright/test';
import { greeting } from './helper';
test('a greets on a page', async ({ page }) => {
  await page.setContent(\`<h1>\${greeting}</h1>\`);
  await expect(page.locator('h1')).toHaveText(greeting);
});
test('a counts letters', () => {
  expect(greeting.length).toBeGreaterThan(0);
});
`,
  'tests/b.spec.ts': `import { expect, test } from '@playwright/test';
import { greeting } from './helper';
test('b greets', () => {
  expect(greeting).toMatch(/^H/);
});
`,
  'tests/c.spec.ts': `import { expect, test } from '@playwright/test';
test('c breaks when asked', () => {
  expect(process.env.BREAK_C).toBeUndefined();
});
test('c stays', () => {
  expect(true).toBe(true);
});
`,
  'tests/d.spec.ts': `import { expect, test } from '@playwright/test';
test('d one', () => {
  expect(1).toBe(1);
});
test('d two', () => {
  expect(2).toBe(2);
});
`,
};

let server: TestServer;
let repoDir: string;
let api: ReturnType<typeof client>;
let key: string;

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Test', ...args], { cwd: repoDir, encoding: 'utf8' }).trim();
}

function write(file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
  fs.writeFileSync(path.join(repoDir, file), content);
}

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live') });
  repoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-affected-'));
  write('package.json', JSON.stringify({ name: 'affected-suite', private: true, type: 'module', devDependencies: { '@playwright/test': '1.65.1' } }, null, 2));
  write('playwright.config.ts', CONFIG);
  write('.gitignore', 'node_modules/\ntest-results/\n');
  for (const [file, content] of Object.entries(SPECS)) write(file, content);
  git('init', '--quiet', '--initial-branch=main');
  git('add', '.');
  git('commit', '--quiet', '-m', 'suite');
  const project = await createProject(server.sql, { name: 'affected', repoUrl: repoDir, repoName: 'acme/affected' });
  key = await createKey(server.sql, { projectId: project.id });
  api = client(server.url, key);
  await api.post('/api/environments', { name: 'CI', slug: 'ci' });
  await api.post('/api/environments', { name: 'Fresh', slug: 'fresh' });
});
afterAll(async () => {
  await server?.close();
  if (repoDir) fs.rmSync(repoDir, { recursive: true, force: true });
});

type Detail = { title: string; status: string };
const titles = (run: { flattenedSummaryDetails: Detail[] }) => run.flattenedSummaryDetails.map((d) => d.title).sort();
const page = async (summaryUrl: string) => (await fetch(summaryUrl)).text();

/** `proctor-ci run` as a CI job runs it, built, in its own process. */
function ciRun(args: string[]): { child: ChildProcess; exited: Promise<number | null>; stdout(): string; stderr(): string } {
  const child = spawn(process.execPath, [path.join(ROOT, 'reporter/dist/cli/main.js'), 'run', '--poll', '1', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PROCTOR_URL: server.url, PROCTOR_API_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe('affected runs', () => {
  let base: { id: number; commit: string };
  let environmentId: number;

  it('when a helper that two specs import changes, then exactly their tests run, with the tests that failed since the last passing run', async () => {
    const passing = await waitForRun(api, await trigger(api, { environment: 'ci' }));
    expect(passing.testRun).toMatchObject({ state: 'passed', total_count: 7, selection: null });
    base = { id: passing.testRun.id, commit: git('rev-parse', 'HEAD') };
    expect(passing.testRun.test_run_head_sha).toBe(base.commit);
    // A later run fails one test of a spec that no change touches: it is run again.
    const failing = await waitForRun(api, await trigger(api, { environment: 'ci', environment_variables_overrides: [{ name: 'BREAK_C', value: '1' }] }));
    expect(failing.testRun).toMatchObject({ state: 'failed', failed_count: 1 });

    write('tests/helper.ts', `export const greeting = 'Hello there';\n`);
    git('commit', '--quiet', '-am', 'a longer greeting');
    const affected = await waitForRun(api, await trigger(api, { environment: 'ci', affected: true }));
    expect(affected.testRun).toMatchObject({ state: 'passed', total_count: 4 });
    expect(titles(affected)).toEqual(['a counts letters', 'a greets on a page', 'b greets', 'c breaks when asked']);
    expect(affected.testRun.selection).toEqual({ mode: 'affected', base_commit: base.commit, base_run_id: base.id, reason: null, left_out: 3 });
    expect(await page(affected.testRun.summary_url)).toContain(`3 tests left out: not affected by changes since ${base.commit.slice(0, 12)}`);
    // The tests left out stay in the inventory: an affected run does not cover the suite.
    const [inactive] = await server.sql`select count(*)::int as n from test_cases where is_active = false`;
    expect(inactive?.n).toBe(0);
  });

  it('when the environment has no passing run on the branch, then every test runs and the run and the command say why', async () => {
    const command = ciRun(['--environment', 'fresh', '--affected', '--json']);
    expect(await command.exited, command.stderr()).toBe(0);
    const result = JSON.parse(command.stdout()) as RunResultJson;
    expect(result).toMatchObject({ state: 'passed', counts: { total: 7 } });
    const reason = 'the environment has no passing run on branch "main" with a known commit to compare with';
    expect(result.selection).toEqual({ mode: 'all', base_commit: null, base_run_id: null, reason, left_out: 0 });
    expect(command.stderr()).toContain(`proctor: every test ran: ${reason}`);
    expect(await page(result.summary_url as string)).toContain(
      `Every test ran although the run asked for the affected ones: ${reason.replaceAll('"', '&quot;')}`,
    );
  });

  it('when full_run_every is 2, then the run after two affected runs in a row runs every test, and the read route says it is due', async () => {
    const environments = (await api.get('/api/environments')).body.data.environments as { id: number; slug: string }[];
    environmentId = environments.find((e) => e.slug === 'ci')?.id as number;
    expect((await api.patch(`/api/environments/${environmentId}`, { full_run_every: 2 })).body.data.environment.full_run_every).toBe(2);
    const before = (await api.get(`/api/environments/${environmentId}/affected-base?branch=main`)).body.data;
    expect(before).toMatchObject({ full_run_due: null, base: { commit: git('rev-parse', 'HEAD') }, tests: [] });

    // Nothing changed since the last passing run and nothing failed there: no test runs, and the run passes.
    const second = await waitForRun(api, await trigger(api, { environment: 'ci', affected: true }));
    expect(second.testRun).toMatchObject({ state: 'passed', total_count: 0, selection: { mode: 'affected', left_out: 7 } });

    const due = (await api.get(`/api/environments/${environmentId}/affected-base?branch=main`)).body.data.full_run_due;
    expect(due).toBe('a full run is due: 2 affected runs in a row since the last full run (full_run_every 2)');
    const full = await waitForRun(api, await trigger(api, { environment: 'ci', affected: true }));
    expect(full.testRun).toMatchObject({ state: 'passed', total_count: 7, selection: { mode: 'all', reason: due, left_out: 0 } });
    expect((await api.get(`/api/environments/${environmentId}/affected-base?branch=main`)).body.data.full_run_due).toBeNull();
  });

  it("when an affected run asks for agents, then it is refused: the selection is the executor's", async () => {
    const response = await api.put('/api/test-runs', { environment: 'ci', affected: true, distribution: 'agents' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('body.affected');
  });
});
