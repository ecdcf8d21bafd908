import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../helpers/axe.ts';
import { layoutProblems } from '../helpers/layout.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from '../helpers/playwright.ts';
import { runReportedSuite } from '../helpers/reports.ts';
import { writeSuiteWithBaselines } from '../helpers/visual.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';

// Flaky screenshots told apart from real changes (issue 57, point 5), with a real Playwright suite
// (one retry): `flicker` changes on its first attempt only and passes on the retry; `jitter` moves a
// 2×2 dot about (JITTER_X), a tiny diff in another place each run; `banner` changes for real.

const SUITE = `
import { test, expect } from '@playwright/test';
const page = (body) => \`<body style="margin:0;background:white">\${body}</body>\`;
const changed = process.env.CHANGED === '1';

test('banner', async ({ page: p }) => {
  await p.setContent(page(\`<div style="width:40px;height:20px;margin:10px;background:\${changed ? 'black' : 'white'}"></div>\`));
  await expect(p).toHaveScreenshot('banner.png');
});

test('flicker', async ({ page: p }, testInfo) => {
  const black = changed && testInfo.retry === 0;
  await p.setContent(page(\`<div style="width:30px;height:10px;margin:50px 120px;background:\${black ? 'navy' : 'white'}"></div>\`));
  await expect(p).toHaveScreenshot('flicker.png');
});

test('jitter', async ({ page: p }) => {
  const x = process.env.JITTER_X;
  await p.setContent(page(x ? \`<div style="position:absolute;left:\${x}px;top:40px;width:2px;height:2px;background:black"></div>\` : ''));
  await expect(p).toHaveScreenshot('jitter.png');
});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  workers: 2,
  retries: 1,
  use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)}, viewport: { width: 200, height: 100 } },
});
`;

const CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

interface Change {
  id: number;
  title: string;
  verdict: 'change' | 'flaky' | 'noise';
  verdict_reason: string | null;
  review: string;
  comparison: { status: string; changed_ratio: number | null };
}

let server: TestServer;
let dir: string;
let projectId: number;
let api: ReturnType<typeof client>;
let key: string;
const runs: number[] = [];

async function changesOf(runId: number): Promise<{ visual_changes: Change[]; counts: Record<string, number> }> {
  const response = await api.get(`/api/test-runs/${runId}/visual-changes`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

const byTitle = (changes: Change[], title: string) => changes.find((c) => c.title === title) as Change;

/** The changed page reported as a run of its own, the dot at `x`; its id once its changes are compared. */
async function reportRun(x: number, pipeline: string): Promise<number> {
  const suite = await runReportedSuite({
    cli: CLI,
    cwd: dir,
    reporter: REPORTER,
    reportFile: path.join(dir, `report-${pipeline}.json`),
    env: { ...process.env, ...reporterEnv(server.url, key), CHANGED: '1', JITTER_X: String(x), CI_PIPELINE_ID: pipeline, CI_COMMIT_BRANCH: 'feature-x' },
    args: [`--output=${path.join(dir, `results-${pipeline}`)}`],
  });
  expect(suite.exitCode, suite.output).toBe(1);
  const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
  await waitForRun(api, listed.id);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const { visual_changes: changes } = await changesOf(listed.id);
    if (changes.length >= 3 && changes.every((c) => c.comparison.status === 'done')) break;
  }
  return listed.id;
}

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'local');
  key = project.key;
  api = client(server.url, key);
  const noise = await api.patch('/api/project', { visual_noise_ratio: 0.001, visual_noise_runs: 5 });
  expect(noise.status, JSON.stringify(noise.body)).toBe(200);
  expect(noise.body.data.project).toMatchObject({ visual_noise_ratio: 0.001, visual_noise_runs: 5 });
  dir = await writeSuiteWithBaselines('visual-flaky-', { 'playwright.config.ts': CONFIG, 'visual.spec.ts': SUITE });
  runs.push(await reportRun(20, '7001'));
  runs.push(await reportRun(140, '7002'));
}, 240_000);

afterAll(async () => {
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('flaky screenshots', () => {
  it('when a screenshot changes on the first attempt and the retry passes, then the change is flaky, saying so, and counted apart', async () => {
    const { visual_changes: changes, counts } = await changesOf(runs[0] as number);
    expect(byTitle(changes, 'flicker')).toMatchObject({ verdict: 'flaky', review: 'pending' });
    expect(byTitle(changes, 'flicker').verdict_reason).toMatch(/^did not reproduce: the test passed on retry 1/);
    expect(byTitle(changes, 'banner')).toMatchObject({ verdict: 'change', verdict_reason: null });
    // The first tiny diff is not noise yet: nothing repeats it.
    expect(byTitle(changes, 'jitter').verdict).toBe('change');
    expect(counts).toEqual({ total: 3, pending: 2, approved: 0, rejected: 0, flaky: 1, noise: 0 });
  });

  it('when a member approves the flaky change by id, then it is refused with 409 naming why, and it stays unapproved', async () => {
    const member = await seedUser(server.sql, [projectId], { role: 'member' });
    const flicker = byTitle((await changesOf(runs[0] as number)).visual_changes, 'flicker');
    const response = await client(server.url, member.key).post(`/api/test-runs/${runs[0]}/visual-changes/review`, { review: 'approved', ids: [flicker.id] });
    expect(response.status).toBe(409);
    expect(response.body.error.message).toMatch(new RegExp(`^visual change ${flicker.id} is flaky, not offered as a baseline: did not reproduce`));
    expect(byTitle((await changesOf(runs[0] as number)).visual_changes, 'flicker').review).toBe('pending');
  });

  it('when the review page is opened, then the flaky change is marked with its reason and has no approve button', async () => {
    const member = await seedUser(server.sql, [projectId], { role: 'member' });
    const token = await createLoginLink(server.sql, member.userId, server.clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    const html = await (await fetch(`${server.url}/projects/${projectId}/runs/${runs[0]}/visual`, { headers: { cookie } })).text();
    const items = html.split('<li class="visual-change"').slice(1);
    const flicker = items.find((item) => item.includes('data-verdict="flaky"')) as string;
    expect(flicker).toContain('<strong>Flaky</strong>: did not reproduce: the test passed on retry 1');
    expect(flicker).not.toContain('data-review="approved"');
    expect(items.filter((item) => item.includes('data-review="approved"'))).toHaveLength(2);
    expect(html).toContain('2 visual changes to review · 1 flaky, not offered as baselines');
  });
});

describe('noise', () => {
  it("when a tiny diff under the project's noise ratio repeats in another place, then it is noise, and the real change is not", async () => {
    const { visual_changes: changes, counts } = await changesOf(runs[1] as number);
    const jitter = byTitle(changes, 'jitter');
    expect(jitter.comparison.changed_ratio).toBeLessThanOrEqual(0.001);
    expect(jitter.verdict).toBe('noise');
    expect(jitter.verdict_reason).toMatch(
      /of pixels changed, at most the project's noise ratio 0\.1%, and 2 of the last 5 runs had small diffs of this screenshot in different places$/,
    );
    expect(byTitle(changes, 'banner').verdict).toBe('change');
    expect(counts).toMatchObject({ total: 3, pending: 1, flaky: 1, noise: 1 });
  });

  it('when all are approved at once, then only the real change is approved, and only its image is offered as a baseline', async () => {
    const response = await api.post(`/api/test-runs/${runs[1]}/visual-changes/review`, { review: 'approved' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const changes = response.body.data.visual_changes as Change[];
    expect(changes.map((c) => [c.title, c.verdict, c.review]).sort()).toEqual([
      ['banner', 'change', 'approved'],
      ['flicker', 'flaky', 'pending'],
      ['jitter', 'noise', 'pending'],
    ]);
    const baselines = (await api.get(`/api/test-runs/${runs[1]}/baselines`)).body.data;
    expect(baselines.files.map((f: { snapshot_name: string }) => f.snapshot_name)).toEqual(['banner']);
  });

  it('when a noise change was approved before it was known to be noise, then it is still not offered as a baseline nor committed', async () => {
    const jitter = byTitle((await changesOf(runs[1] as number)).visual_changes, 'jitter');
    await server.sql`update visual_changes set review = 'approved' where id = ${jitter.id}`;
    const baselines = (await api.get(`/api/test-runs/${runs[1]}/baselines`)).body.data;
    expect(baselines.files.map((f: { snapshot_name: string }) => f.snapshot_name)).toEqual(['banner']);
    const named = await api.post(`/api/test-runs/${runs[1]}/visual-changes/review`, { review: 'approved', ids: [jitter.id] });
    expect(named.status).toBe(409);
    expect(named.body.error.message).toMatch(/is noise, not offered as a baseline/);
  });
});

describe('the review page with flaky and noise changes in Chromium', () => {
  it('when it is opened 390 px wide in either theme, then it does not scroll sideways and axe finds nothing serious', async () => {
    const member = await seedUser(server.sql, [projectId], { role: 'member' });
    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      for (const theme of ['light', 'dark'] as const) {
        const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: theme });
        const token = await createLoginLink(server.sql, member.userId, server.clock.now);
        const page = await context.newPage();
        await page.goto(`${server.url}/sign-in/link?token=${token}`);
        await page.goto(`${server.url}/projects/${projectId}/runs/${runs[1]}/visual`);
        await page.waitForLoadState('networkidle');
        expect(await page.locator('.visual-verdict').count()).toBe(2);
        expect((await layoutProblems(page, 0)).overflow, theme).toBeNull();
        expect(await seriousViolations(page), theme).toEqual([]);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  }, 60_000);
});
