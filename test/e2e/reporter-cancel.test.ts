// Shards that CI runs itself hear a cancel within a second (issue 56, point 2): two plain
// `playwright test --shard i/2` with the reporter (a project key of scope `report`), real Chromium.
// The reporter asks its run's state each second while the tests run, so the shard inside a long
// test, whose reporter has nothing to upload, stops its Playwright as Ctrl-C would within seconds of
// the cancel (fail fast's, reached by the other shard, or a person's through the API), still ends
// its shard, and says the run was cancelled. On both ends of the peer range: the repository's
// Playwright and 1.42 (installed once per machine, test/helpers/playwright-versions.ts), whose
// SIGINT handling the reporter's stop relies on as much as on the newest's.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { client } from '../helpers/http.ts';
import { ROOT, reporterEnv, runSampleSuite, type SuiteRun } from '../helpers/playwright.ts';
import { PLAYWRIGHT_VERSIONS, playwrightModules } from '../helpers/playwright-versions.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedProject, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

/** How long the slow test takes: the shard would take at least this. */
const SLOW_MS = 240_000;
/** The most a shard may take to end after the cancel: the check each second, Playwright's stop, the shard's end. */
const STOP_MS = 5000;

const CONFIG = `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({ testDir: './tests', retries: 0, timeout: 600_000, workers: 1, use: { launchOptions: executablePath ? { executablePath } : {} } });
`;

/** Shard 1 (the first file): a test that fails once the slow test is under way; shard 2: the slow test, in its browser. */
const FAILING = `import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
test('checkout pays', async ({ page }) => {
  for (let waited = 0; waited < 120_000 && !fs.existsSync(path.join(process.env.RECORD_DIR, 'slow-started')); waited += 200)
    await new Promise((resolve) => setTimeout(resolve, 200));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await page.setContent('<h1>Out of stock</h1>');
  await expect(page.locator('h1')).toHaveText('Paid', { timeout: 500 });
});
`;
const SLOW = `import fs from 'node:fs';
import path from 'node:path';
import { test } from '@playwright/test';
test('slow one', async ({ page }) => {
  await page.setContent('<h1>Waiting</h1>');
  fs.writeFileSync(path.join(process.env.RECORD_DIR, 'slow-started'), '');
  await new Promise((resolve) => setTimeout(resolve, ${SLOW_MS}));
  fs.writeFileSync(path.join(process.env.RECORD_DIR, 'slow-finished'), '');
});
`;

/** The peer range's ends: its first release and the repository's own (its newest). */
const OWN_PLAYWRIGHT = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@playwright/test/package.json'), 'utf8')) as { version: string }).version;
const ENDS = [PLAYWRIGHT_VERSIONS[0], OWN_PLAYWRIGHT];

describe.each(ENDS)('on Playwright %s', (version) => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let key: string;
  let suite: string;
  let records: string;
  let playwrightCli: string;

  beforeAll(async () => {
    server = await startTestServer({ clock: new TestClock('live') });
    const project = await seedProject(server.sql);
    // What CI holds: a project key that reports, not an agent's token or a run's key.
    key = await createKey(server.sql, { projectId: project.projectId }, 'report');
    api = client(server.url, await createKey(server.sql, { projectId: project.projectId }, 'admin'));
    fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    suite = fs.mkdtempSync(path.join(ROOT, '.tmp', 'reporter-cancel-'));
    records = path.join(suite, 'records');
    fs.mkdirSync(records);
    fs.writeFileSync(path.join(suite, 'playwright.config.ts'), CONFIG);
    fs.mkdirSync(path.join(suite, 'tests'));
    fs.writeFileSync(path.join(suite, 'tests', 'a-checkout.spec.ts'), FAILING);
    fs.writeFileSync(path.join(suite, 'tests', 'b-slow.spec.ts'), SLOW);
    // The suite's Playwright is the release's: its config and tests resolve @playwright/test there, and it runs that release's CLI.
    const modules = playwrightModules(version);
    fs.symlinkSync(modules, path.join(suite, 'node_modules'), 'dir');
    playwrightCli = path.join(modules, '@playwright/test/cli.js');
  }, 6 * 60_000);
  afterAll(async () => {
    await server?.close();
    if (suite) fs.rmSync(suite, { recursive: true, force: true });
  });

  /** One shard of the suite, as CI runs it; `endedAt`: when its Playwright exited. */
  async function shard(current: number, total: number, env: Record<string, string>): Promise<SuiteRun & { endedAt: number }> {
    const run = await runSampleSuite({
      cwd: suite,
      args: ['--shard', `${current}/${total}`],
      env: { ...reporterEnv(server.url, key, 'ci'), RECORD_DIR: records, ...env },
      playwrightCli,
    });
    return { ...run, endedAt: Date.now() };
  }

  async function endedAt(runKey: string): Promise<{ id: number; endedAt: number }> {
    const [row] = await server.sql<{ id: number; run_ended_at: Date }[]>`select id, run_ended_at from test_runs where run_key = ${`ci:${runKey}`}`;
    return { id: row?.id as number, endedAt: (row?.run_ended_at as Date).getTime() };
  }

  describe('a shard CI runs itself hears a cancel within a second', () => {
    it('when two shards report one run with max failures 1 and shard 1 fails a test while shard 2 is in a long test, then shard 2 stops its Playwright within seconds of the cancel and says the run was cancelled by fail fast', async () => {
      for (const name of fs.readdirSync(records)) fs.rmSync(path.join(records, name));
      const env = { PROCTOR_MAX_FAILURES: '1', PROCTOR_RUN_KEY: 'cancel-failfast' };
      const [first, second] = await Promise.all([shard(1, 2, env), shard(2, 2, env)]);
      const run = await endedAt('cancel-failfast');
      const stopped = (await api.get(`/api/test-runs/${run.id}`)).body.data.test_run.testRun;
      expect(stopped).toMatchObject({ state: 'cancelled', cancelled_by: 'max_failures', max_failures: 1, total_shards: 2 });
      expect(stopped.cancel_reason).toContain('checkout pays');
      expect(fs.existsSync(path.join(records, 'slow-finished')), 'the slow test did not end').toBe(false);
      // Shard 2 had nothing to upload: it heard the cancel from its check of the run's state.
      expect(second.output).toMatch(/\[proctor\] the run has ended \(cancelled\) by fail fast: its failures reached max_failures: stopped after 1 failed test/);
      // Its last line says the run was cancelled; the interrupted result it refused is no delivery fault.
      expect(second.output).toMatch(/results delivered to run #\d+ \(cancelled\)/);
      expect(second.output).not.toContain('not delivered');
      expect(second.exitCode, second.output).not.toBe(0);
      expect(second.recorded.find((attempt) => attempt.title === 'slow one')?.status ?? 'interrupted').not.toBe('passed');
      expect(first.exitCode, first.output).not.toBe(0);
      const latency = second.endedAt - run.endedAt;
      console.log(`reporter cancel on Playwright ${version} (fail fast): shard 2 ended ${latency} ms after the recorded cancel`);
      expect(latency, second.output).toBeLessThan(STOP_MS);
    });

    it('when a person cancels a run through the API while its one shard is in a long test, then the shard stops within seconds and its reporter says the run was cancelled, with the reason', async () => {
      for (const name of fs.readdirSync(records)) fs.rmSync(path.join(records, name));
      // Shard 2 of 2 alone: the slow test; its run cancelled once the test is under way.
      const running = shard(2, 2, { PROCTOR_RUN_KEY: 'cancel-person' });
      await waitUntil(() => fs.existsSync(path.join(records, 'slow-started')), 120_000, 'the slow test to start');
      const [row] = await server.sql<{ id: number }[]>`select id from test_runs where run_key = 'ci:cancel-person'`;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const cancel = await api.post(`/api/test-runs/${row?.id}/cancel`, { reason: 'a newer commit' });
      expect(cancel.status).toBe(200);
      const second = await running;
      const run = await endedAt('cancel-person');
      expect(second.output).toContain('[proctor] the run has ended (cancelled): a newer commit; stopping the tests');
      expect(second.output).toMatch(/results delivered to run #\d+ \(cancelled\)/);
      expect(second.exitCode, second.output).not.toBe(0);
      expect(fs.existsSync(path.join(records, 'slow-finished'))).toBe(false);
      const latency = second.endedAt - run.endedAt;
      console.log(`reporter cancel on Playwright ${version} (a person): the shard ended ${latency} ms after the recorded cancel`);
      expect(latency, second.output).toBeLessThan(STOP_MS);
    });
  });
});
