import path from 'node:path';
import { chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { addMember, createProject } from '../../server/src/projects/store.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, EXAMPLES } from '../helpers/playwright.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A person triggers a run of the sample suite (the demo's) from the dashboard, and its page follows
// it to the end: a newcomer's first run page, with a failure's screenshot and trace.
let server: TestServer;
let projectId: number;
let userId: string;

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live') });
  const project = await createProject(server.sql, { name: 'Demo', repoUrl: path.resolve(EXAMPLES), repoName: 'acme/demo' });
  projectId = project.id;
  await client(server.url, await createKey(server.sql, { projectId })).post('/api/environments', { name: 'Local', slug: 'local' });
  userId = await createUser(server.sql, { email: 'runner@example.com', name: 'Runner', picture: '' });
  await addMember(server.sql, projectId, userId, 'admin');
});

afterAll(async () => server?.close());

describe('a run triggered from the dashboard', () => {
  it('when a person triggers a run, then its page follows it live until it ends, with its failures, each with its screenshot and trace', async () => {
    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, new Date())}`);
      await page.goto(`${server.url}/projects/${projectId}/environments`);
      await page.locator('tr[data-environment="local"]').getByRole('button', { name: 'Run now' }).click();
      await page.waitForURL(new RegExp(`/projects/${projectId}/runs/\\d+$`));
      expect(['pending', 'queued', 'running']).toContain(await page.locator('h1 .state').textContent());
      // Nobody reloads: the page does, each time the run's state changes.
      await expect.poll(() => page.locator('h1 .state').textContent(), { timeout: 150_000, interval: 1000 }).toBe('failed');
      expect(await page.locator('h2', { hasText: 'Failed' }).count()).toBe(1);
      expect(Number(await page.locator('[data-count="total"] b').textContent())).toBeGreaterThan(0);
      // The sample suite keeps a failed try's screenshot and trace: the first run page shows both.
      const failure = page.locator('tr.failed', { hasText: 'greets a returning user' }).first();
      const screenshot = failure.locator('section.try img').first();
      await screenshot.scrollIntoViewIfNeeded();
      await expect.poll(() => screenshot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      const [viewer] = await Promise.all([page.context().waitForEvent('page'), failure.getByRole('link', { name: 'Open trace' }).first().click()]);
      await expect.poll(() => viewer.getByText('toHaveText').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    } finally {
      await browser.close();
    }
  }, 180_000);
});
