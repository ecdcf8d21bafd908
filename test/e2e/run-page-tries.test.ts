import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Details } from '../helpers/artifacts.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from '../helpers/playwright.ts';
import { runReportedSuite } from '../helpers/reports.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A real run that retried: a test that fails on its first try and passes on its retry, each try
// recording a screenshot and a trace. On the run page each try's trace sits with that try's
// screenshot, and "Open trace" opens the viewer beside the run page rather than in its place.
const SUITE = `
import { test, expect } from '@playwright/test';

test('fails once, then passes', async ({ page }, testInfo) => {
  await page.setContent(\`<h1 id="title">Try \${testInfo.retry}</h1>\`);
  await expect(page.locator('#title')).toHaveText('Try 1', { timeout: 300 });
});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  retries: 1,
  use: { screenshot: 'on', trace: 'on', launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
});
`;

let server: TestServer;
let dir: string;
let runId: number;
let details: Details;
let summaryUrl: string;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  const project = await seedProject(server.sql);
  await seedEnvironment(server.sql, project.projectId, 'local');
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'tries-suite-'));
  fs.writeFileSync(path.join(dir, 'playwright.config.ts'), CONFIG);
  fs.writeFileSync(path.join(dir, 'tries.spec.ts'), SUITE);
  const { exitCode, output } = await runReportedSuite({
    cli: path.join(ROOT, 'node_modules/@playwright/test/cli.js'),
    cwd: dir,
    reporter: REPORTER,
    reportFile: path.join(dir, 'report.json'),
    args: [`--output=${path.join(dir, 'results')}`],
    env: { ...process.env, ...reporterEnv(server.url, project.key) },
  });
  expect(exitCode, output).toBe(0);
  const api = client(server.url, project.key);
  const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
  runId = listed.id;
  const stored = await waitForRun(api, runId);
  details = stored.flattenedSummaryDetails as Details;
  summaryUrl = stored.testRun.summary_url as string;
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The path of an attachment's signed URL: the same file whatever the signature's time. */
const pathOf = (url: string) => new URL(url, server.url).pathname;

describe('the run page of a test that retried', () => {
  it("when a flaky test's tries each recorded a screenshot and a trace, then each try's trace link sits with that try's screenshot, and opens the viewer in a tab of its own", async () => {
    const [flaky] = details;
    expect(flaky?.status).toBe('flaky');
    const attachment = (retry: number, name: string) => pathOf(flaky?.attachments.find((a) => a.retry === retry && a.name === name)?.url as string);

    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      expect((await page.goto(summaryUrl))?.status()).toBe(200);
      const row = page.locator('tr', { hasText: 'fails once, then passes' });
      const tries = row.locator('section.try');
      expect(await tries.evaluateAll((sections) => sections.map((s) => s.getAttribute('data-retry')))).toEqual(['0', '1']);
      for (const retry of [0, 1]) {
        const block = row.locator(`section.try[data-retry="${retry}"]`);
        expect(pathOf((await block.locator('img').getAttribute('src')) as string)).toBe(attachment(retry, 'screenshot'));
        const link = block.getByRole('link', { name: 'Open trace' });
        expect(await link.count()).toBe(1);
        const trace = new URL((await link.getAttribute('href')) as string, server.url).searchParams.get('trace') as string;
        expect(pathOf(trace)).toBe(attachment(retry, 'trace'));
        expect(await link.getAttribute('target')).toBe('_blank');
        expect((await link.getAttribute('rel'))?.split(' ')).toContain('noopener');
      }

      // The retry's trace: the viewer opens beside the run page, on the retry's own actions.
      const runPageUrl = page.url();
      const [viewer] = await Promise.all([
        context.waitForEvent('page'),
        row.locator('section.try[data-retry="1"]').getByRole('link', { name: 'Open trace' }).click(),
      ]);
      await viewer.waitForURL(/\/trace-viewer\/index\.html\?trace=/);
      await expect.poll(() => viewer.getByText('toHaveText').count(), { timeout: 30_000 }).toBeGreaterThan(0);
      expect(page.url()).toBe(runPageUrl);
      // noopener: the viewer cannot reach back into the run page.
      expect(await viewer.evaluate(() => window.opener === null)).toBe(true);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
