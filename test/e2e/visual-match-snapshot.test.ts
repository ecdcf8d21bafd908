import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from '../helpers/playwright.ts';
import { runReportedSuite, type ReportedSuite } from '../helpers/reports.ts';
import { writeSuiteWithBaselines } from '../helpers/visual.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

// Issue 57, point 1: a `toMatchSnapshot` of an image is a visual change as `toHaveScreenshot` is
// (Playwright names its attachments alike: `<name>-expected.png`, `-actual.png`, `-diff.png`),
// while a `toMatchSnapshot` of text that changed stays an ordinary failure. Real Playwright: the
// baselines written with --update-snapshots, then the changed page reported to Proctor.
const SUITE = `
import { test, expect } from '@playwright/test';
const shade = process.env.SHADE ?? 'white';
test.beforeEach(async ({ page }) => page.setViewportSize({ width: 100, height: 50 }));

test('logo image', async ({ page }) => {
  await page.setContent(\`<body style="margin:0;background:white"><div style="width:20px;height:10px;margin:5px;background:\${shade}"></div></body>\`);
  expect(await page.screenshot()).toMatchSnapshot('logo.png');
});

test('banner text', async () => {
  expect(\`banner \${shade}\\n\`).toMatchSnapshot('banner.txt');
});
`;
const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: '.', workers: 1, use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} } });
`;
const CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

let server: TestServer;
let api: ReturnType<typeof client>;
let dir: string;
let suite: ReportedSuite;
let runId: number;

interface Change {
  title: string;
  snapshot_name: string;
  comparison: { status: string; changed_pixels: number; width: number; height: number };
}

const changesOf = async () =>
  (await api.get(`/api/test-runs/${runId}/visual-changes`)).body.data as { visual_changes: Change[]; counts: Record<string, number> };

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  await seedEnvironment(server.sql, project.projectId, 'local');
  api = client(server.url, project.key);
  dir = await writeSuiteWithBaselines('match-snapshot-', { 'playwright.config.ts': CONFIG, 'image.spec.ts': SUITE });
  suite = await runReportedSuite({
    cli: CLI,
    cwd: dir,
    reporter: REPORTER,
    reportFile: path.join(dir, 'report.json'),
    env: { ...process.env, ...reporterEnv(server.url, project.key), SHADE: 'navy' },
    args: [`--output=${path.join(dir, 'results')}`],
  });
  runId = (await api.get('/api/test-runs?environment=local')).body.data.test_runs[0].id;
  await waitForRun(api, runId);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if ((await changesOf()).visual_changes.some((c) => c.comparison.status === 'done')) break;
  }
}, 170_000);

afterAll(async () => {
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('toMatchSnapshot of an image', () => {
  it('when an image compared with toMatchSnapshot changes, then it is a visual change compared as a screenshot is; a changed text snapshot is not one', async () => {
    expect(suite.exitCode, suite.output).toBe(1);
    const { visual_changes: changes, counts } = await changesOf();
    expect(changes.map((c) => [c.title, c.snapshot_name])).toEqual([['logo image', 'logo']]);
    expect(changes[0]?.comparison).toMatchObject({ status: 'done', width: 100, height: 50, changed_pixels: 200 });
    expect(counts).toMatchObject({ total: 1, pending: 1 });
  });
});
