import fs from 'node:fs';
import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { layoutProblems } from '../helpers/layout.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { runVisualSuite, type VisualSuite } from '../helpers/visual.ts';

// The review page of a run's visual changes in real Chromium, over a real suite whose page changed.

let server: TestServer;
let suite: VisualSuite;
let browser: Browser;
let runId: number;
let projectId: number;
let signedIn: Awaited<ReturnType<Awaited<ReturnType<Browser['newContext']>>['storageState']>>;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'local');
  api = client(server.url, project.key);
  suite = await runVisualSuite(server.url, project.key);
  runId = (await api.get('/api/test-runs?environment=local')).body.data.test_runs[0].id;
  await waitForRun(api, runId);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const changes = (await api.get(`/api/test-runs/${runId}/visual-changes`)).body.data.visual_changes as { comparison: { status: string } }[];
    if (changes.filter((c) => c.comparison.status === 'done').length >= 2) break;
  }
  const member = await seedUser(server.sql, [projectId], { role: 'member' });
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  const context = await browser.newContext();
  const token = await createLoginLink(server.sql, member.userId, server.clock.now);
  await (await context.newPage()).goto(`${server.url}/sign-in/link?token=${token}`);
  signedIn = await context.storageState();
  await context.close();
}, 170_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (suite) fs.rmSync(suite.dir, { recursive: true, force: true });
});

async function open(target: string, width: number, theme: 'light' | 'dark' = 'light'): Promise<{ page: Page; refused: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 844 }, colorScheme: theme, storageState: signedIn });
  const page = await context.newPage();
  const refused: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') refused.push(message.text());
  });
  await page.goto(`${server.url}${target}`);
  return { page, refused };
}

const loaded = (page: Page, selector: string) =>
  page.locator(selector).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth === 200 && img.naturalHeight === 100);

describe('the review page in Chromium', () => {
  it('when the run page is opened, then it counts the visual changes apart and links the review page', async () => {
    const { page } = await open(`/projects/${projectId}/runs/${runId}`, 1280);
    try {
      const link = page.getByRole('link', { name: '2 visual changes to review' });
      await link.click();
      await page.waitForURL(new RegExp(`/runs/${runId}/visual$`));
      await expect.poll(() => page.locator('.visual-change').count()).toBe(2);
    } finally {
      await page.context().close();
    }
  });

  it('when a change is viewed side by side, as an overlay and as the diff, then each view shows its images and boxes, and zoom and the slider act', async () => {
    const { page, refused } = await open(`/projects/${projectId}/runs/${runId}/visual`, 1280);
    try {
      const first = page.locator('.visual-change').first();
      await expect.poll(() => loaded(page, '.visual-change:first-child .frame-expected img')).toBe(true);
      await expect.poll(() => loaded(page, '.visual-change:first-child .frame-actual img')).toBe(true);
      expect(await first.locator('.visual-share').textContent()).toMatch(/^4\.00% of pixels changed \(800 of 200×100\) · 1 changed area/);
      // The box of the banner's 40×20 change at (10, 10), drawn over the 200×100 image.
      const box = await first.locator('.frame-actual .change-box').boundingBox();
      const image = await first.locator('.frame-actual img').boundingBox();
      expect(box && image && Math.round(((box.x - image.x) / image.width) * 200)).toBe(10);
      expect(box && image && Math.round((box.width / image.width) * 200)).toBe(40);

      await first.getByRole('button', { name: 'Overlay' }).click();
      expect(await first.locator('[data-view="side"]').isHidden()).toBe(true);
      await expect.poll(() => loaded(page, '.visual-change:first-child .overlay-new')).toBe(true);
      await first.getByLabel('Slider').fill('80');
      expect(await first.locator('.overlay-new').evaluate((img) => (img as HTMLElement).style.clipPath)).toBe('inset(0px 0px 0px 80%)');

      await first.getByRole('button', { name: 'Diff' }).click();
      expect(await first.getByRole('button', { name: 'Diff' }).getAttribute('aria-pressed')).toBe('true');
      await expect.poll(() => loaded(page, '.visual-change:first-child .frame-diff img')).toBe(true);
      await first.getByLabel('Zoom').selectOption('2');
      expect((await first.locator('.frame-diff').boundingBox())?.width).toBeGreaterThanOrEqual(400);
      expect(refused).toEqual([]);
    } finally {
      await page.context().close();
    }
  });

  it('when the keys approve the first and reject the second, then the page and the API say so, with who', async () => {
    const { page } = await open(`/projects/${projectId}/runs/${runId}/visual`, 1280);
    try {
      await page.locator('h1').click();
      await page.keyboard.press('j');
      await page.keyboard.press('a');
      const first = page.locator('.visual-change').nth(0);
      const second = page.locator('.visual-change').nth(1);
      await expect.poll(() => first.getAttribute('data-state')).toBe('approved');
      await page.keyboard.press('ArrowRight');
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.classList.contains('visual-change') && document.activeElement.id))
        .toBe(await second.getAttribute('id'));
      await page.keyboard.press('r');
      await expect.poll(() => second.getAttribute('data-state')).toBe('rejected');
      expect(await first.locator('.review-state').textContent()).toMatch(/^Approved by User \d+ on /);
      expect(await page.locator('[data-visual-summary]').textContent()).toBe('2 visual changes: 1 rejected, 1 approved');
      const stored = (await api.get(`/api/test-runs/${runId}/visual-changes`)).body.data;
      expect(stored.counts).toEqual({ total: 2, pending: 0, approved: 1, rejected: 1, flaky: 0, noise: 0 });
      expect(stored.visual_changes.map((c: { review: string }) => c.review)).toEqual(['approved', 'rejected']);
    } finally {
      await page.context().close();
    }
  });

  it('when the review page is opened 390 and 1280 px wide, then it does not scroll sideways and axe finds nothing serious in either theme', async () => {
    for (const width of [390, 1280]) {
      for (const theme of ['light', 'dark'] as const) {
        const { page, refused } = await open(`/projects/${projectId}/runs/${runId}/visual`, width, theme);
        try {
          await page.waitForLoadState('networkidle');
          expect((await layoutProblems(page, 0)).overflow, `${width} px, ${theme}`).toBeNull();
          expect(await seriousViolations(page), `${width} px, ${theme}`).toEqual([]);
          expect(refused).toEqual([]);
        } finally {
          await page.context().close();
        }
      }
    }
  });
});
