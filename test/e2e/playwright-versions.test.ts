// Suites pinned at each Playwright release of the reporter's peer range (1.42 to the newest), run
// by the executor (a triggered run, a rerun of its failed tests, test_case_ids) and by an agent on
// the suite's own folder: each selects its tests as that Playwright understands (locations before
// 1.56, --test-list after), and each launches Debian's Chromium.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { client } from '../helpers/http.ts';
import { PLAYWRIGHT_VERSIONS, playwrightModules } from '../helpers/playwright-versions.ts';
import { workspaceAgent } from '../helpers/process.ts';
import { trigger, waitForRun, waitUntil } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

const FILES: Record<string, string> = {
  'playwright.config.ts': `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({ testDir: './tests', retries: 0, use: { launchOptions: { executablePath } }, projects: [{ name: 'alpha' }, { name: 'beta' }] });
`,
  'tests/record.mjs': `import fs from 'node:fs';
import path from 'node:path';
export function record(testInfo, browser = '') {
  fs.writeFileSync(path.join(process.env.RECORD_DIR, [testInfo.project.name, testInfo.title, Math.random().toString(36).slice(2)].join('~')), browser);
}
`,
  'tests/pages.spec.ts': `import { expect, test } from '@playwright/test';
import { record } from './record.mjs';
test('opens a page', async ({ page, browser }, testInfo) => {
  await page.setContent('<h1>Hello</h1>');
  await expect(page.locator('h1')).toHaveText('Hello');
  record(testInfo, browser.version());
});
test('fails', async ({}, testInfo) => { record(testInfo); expect(1).toBe(2); });
for (const n of [1, 2]) test(\`loop \${n}\`, async ({}, testInfo) => { record(testInfo); });
`,
  'tests/other.spec.ts': `import { test } from '@playwright/test';
import { record } from './record.mjs';
test('counts', async ({}, testInfo) => { record(testInfo); });
`,
};
const TESTS = ['opens a page', 'fails', 'loop 1', 'loop 2', 'counts'];
const EVERY_TEST = ['alpha', 'beta'].flatMap((project) => TESTS.map((title) => `${project}/${title}`)).sort();

/** The suite in a folder of its own (no git: run where it is), its node_modules the release's. */
function suiteAt(version: string): { dir: string; records: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `proctor-pw-${version}-`));
  const records = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-pw-records-'));
  // The suite runs as the runner user: it reads the folder and writes its records.
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(records, 0o777);
  const files = {
    ...FILES,
    'package.json': JSON.stringify({ name: 'pinned-suite', private: true, type: 'module', devDependencies: { '@playwright/test': version } }),
    '.env': `RECORD_DIR=${records}\n`,
  };
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(dir, file), content);
  }
  fs.symlinkSync(playwrightModules(version), path.join(dir, 'node_modules'), 'dir');
  return { dir, records };
}

/** What ran since the last call, `project/title` each, and the browser versions the page tests saw. */
function executions(records: string): { ran: string[]; browsers: string[] } {
  const names = fs.readdirSync(records);
  const ran = names.map((name) => name.split('~').slice(0, 2).join('/')).sort();
  const browsers = names.filter((name) => name.includes('~opens a page~')).map((name) => fs.readFileSync(path.join(records, name), 'utf8'));
  for (const name of names) fs.rmSync(path.join(records, name));
  return { ran, browsers };
}

// What a suite's Playwright understands depends on neither the database nor Node's version: CI's
// PostgreSQL pass runs it once (about 3 minutes a version); the embedded pass says it is skipped.
describe.skipIf(!process.env.DATABASE_URL)('every supported Playwright (run in the PostgreSQL pass)', () => {
  let server: TestServer;
  const cleanup: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_AGENT_LEASE_S: '5' } });
  });
  afterAll(async () => {
    await server?.close();
    for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe.each(PLAYWRIGHT_VERSIONS)('a suite pinned at Playwright %s', (version) => {
    let api: ReturnType<typeof client>;
    let key: string;
    let suite: { dir: string; records: string };

    beforeAll(async () => {
      suite = suiteAt(version);
      cleanup.push(suite.dir, suite.records);
      const project = await createProject(server.sql, {
        name: `pinned-${version}`,
        repoUrl: suite.dir,
        repoName: `acme/pinned-${version.replaceAll('.', '-')}`,
      });
      await server.sql`insert into environments (project_id, slug, name, env_files) values (${project.id}, 'ci', 'CI', '{.env}')`;
      key = await createKey(server.sql, { projectId: project.id });
      api = client(server.url, key);
    }, 180_000);

    let firstRun: number;

    it('when a run is triggered, then every test runs once in Debian Chromium 156 and the run ends failed', async () => {
      firstRun = await trigger(api, { environment: 'ci' });
      const run = await waitForRun(api, firstRun);
      expect(run.testRun, JSON.stringify(run.testRun)).toMatchObject({ state: 'failed', total_count: 10, success_count: 8, failed_count: 2 });
      const seen = executions(suite.records);
      expect(seen.ran).toEqual(EVERY_TEST);
      expect(seen.browsers).toHaveLength(2);
      for (const browser of seen.browsers) expect(browser).toMatch(/^156\./);
    });

    it('when only the failed tests are rerun, then just those run, in both runner projects', async () => {
      const run = await waitForRun(api, await trigger(api, { environment: 'ci', rerun_source_id: firstRun, rerun_only_failed: true }));
      expect(run.testRun).toMatchObject({ state: 'failed', total_count: 2, failed_count: 2 });
      expect(executions(suite.records).ran).toEqual(['alpha/fails', 'beta/fails']);
    });

    it('when a run names test_case_ids, then only those run', async () => {
      const details = (await waitForRun(api, firstRun)).flattenedSummaryDetails as { test_case_id: string; title: string; runner_project: string }[];
      const counts = details.find((d) => d.title === 'counts' && d.runner_project === 'beta');
      const run = await waitForRun(api, await trigger(api, { environment: 'ci', test_case_ids: [counts?.test_case_id] }));
      expect(run.testRun).toMatchObject({ state: 'passed', total_count: 1 });
      expect(executions(suite.records).ran).toEqual(['beta/counts']);
    });

    it('when an agent runs the suite from its folder (--workspace), then every test runs once and the agent exits 0', async () => {
      const runKey = `pinned-${version}`;
      const agent = await workspaceAgent({ url: server.url, key }, runKey, suite.dir);
      expect(agent.code, agent.output).toBe(0);
      let runId = 0;
      await waitUntil(async () => {
        const [found] = await server.sql<{ id: number }[]>`select id from test_runs where run_key = ${runKey}`;
        runId = found?.id ?? 0;
        return runId > 0;
      });
      const run = await waitForRun(api, runId);
      expect(run.testRun).toMatchObject({ state: 'failed', total_count: 10, success_count: 8, failed_count: 2 });
      expect(executions(suite.records).ran).toEqual(EVERY_TEST);
      const units = await server.sql<{ tests: string[] }[]>`select tests from test_run_units where test_run_id = ${runId}`;
      // Before 1.56 a unit names its tests by location; the loop's two tests share one.
      const byLocation = Number(version.split('.')[1]) < 56;
      for (const unit of units) for (const line of unit.tests) expect(line).toMatch(byLocation ? /^\w+\.spec\.ts:\d+:\d+$/ : /^\[\w+\] › /);
    });
  });
});
