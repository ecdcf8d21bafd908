import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../server/src/principals.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A project's Settings in real Chromium: what each role reads there, and the new-destination form,
// which shows the fields of the chosen type only (and every field without JavaScript).
let server: TestServer;
let browser: Browser;
let projectId: number;
const people = new Map<Role, string>();
const clock = new TestClock('live');

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql, 'Settings shop');
  projectId = project.projectId;
  await client(server.url, project.key).put('/api/retention-policy', { results_days: 45, artifacts_days: 9 });
  for (const role of ['viewer', 'member', 'admin'] as const) people.set(role, (await seedUser(server.sql, [projectId], { role })).userId);
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function settingsOf(role: Role, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage();
  await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, people.get(role) as string, clock.now)}`);
  await page.goto(`${server.url}/projects/${projectId}/settings`);
  return page;
}

/** The headings of the page followed by nothing but a muted description before the next heading of their level or above. */
function emptyHeadings(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const empty: string[] = [];
    for (const heading of document.querySelectorAll('main h2, main h3')) {
      const level = Number(heading.tagName.slice(1));
      let content = false;
      for (let next = heading.nextElementSibling; next; next = next.nextElementSibling) {
        if (/^H[1-6]$/.test(next.tagName) && Number(next.tagName.slice(1)) <= level) break;
        if (!(next.matches('p.muted') || next.textContent?.trim() === '')) content = true;
      }
      if (!content) empty.push(heading.textContent ?? '');
    }
    return empty;
  });
}

describe('the settings page by role', () => {
  for (const role of ['viewer', 'member', 'admin'] as const) {
    it(`when ${role === 'admin' ? 'an' : 'a'} ${role} opens Settings, then every heading has content under it, and Retention shows the policy's values`, async () => {
      const page = await settingsOf(role);
      expect(await page.getByRole('heading', { name: 'Retention' }).count()).toBe(1);
      expect(await emptyHeadings(page)).toEqual([]);
      expect(await page.locator('[data-retention]').textContent()).toBe('Results are kept 45 days after their run ends, attachments 9 days.');
      expect(await page.getByRole('button', { name: 'Save retention' }).count()).toBe(role === 'admin' ? 1 : 0);
      expect(await seriousViolations(page)).toEqual([]);
    });
  }
});

describe('the new-destination form', () => {
  const visibleFields = (page: Page) =>
    page
      .getByRole('region', { name: 'New destination' })
      .locator('label')
      .evaluateAll((labels) =>
        labels.filter((label) => !(label as HTMLElement).hidden && label.getClientRects().length > 0).map((label) => label.getAttribute('for')),
      );

  it('when a type is chosen, then only its fields show, and its help text names every type', async () => {
    const page = await settingsOf('admin');
    const common = ['dest-envs', 'dest-when'];
    const expected = {
      slack: ['dest-type', 'dest-url', 'dest-channel', ...common, 'dest-token'],
      teams: ['dest-type', 'dest-url', ...common],
      webhook: ['dest-type', 'dest-url', ...common, 'dest-secret'],
      github: ['dest-type', 'dest-repo', ...common, 'dest-token'],
      gitlab: ['dest-type', 'dest-project', ...common, 'dest-token'],
    };
    // Slack is chosen when the page opens.
    expect(await visibleFields(page)).toEqual(expected.slack);
    for (const [type, fields] of Object.entries(expected)) {
      await page.getByLabel('Type').selectOption(type);
      expect(await visibleFields(page), type).toEqual(fields);
      expect(await seriousViolations(page)).toEqual([]);
    }
    const help = await page.getByRole('heading', { name: 'Notifications' }).locator('xpath=following-sibling::p[1]').textContent();
    for (const name of ['Slack', 'Microsoft Teams', 'webhook', 'GitHub', 'GitLab']) expect(help).toContain(name);

    // A GitLab destination made through the form sends the GitLab fields alone.
    await page.getByLabel('Project (GitLab, group/name or id)').fill('acme/shop');
    await page.getByLabel('GitHub or GitLab token').fill('glpat-0123456789abcdef');
    await page.getByRole('button', { name: 'Add destination' }).click();
    await expect.poll(() => page.locator('tr[data-destination]').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('tr[data-destination] td').first().textContent()).toBe('gitlab');

    // A Slack app's destination by a person's id and its bot token: listed by where it posts, the token never shown.
    await page.getByLabel('Type').selectOption('slack');
    await page.getByLabel(/^Or a Slack app: channel id/).fill('U0123ABCD');
    await page.locator('#dest-token').fill('xoxb-settings-page-token');
    await page.getByRole('button', { name: 'Add destination' }).click();
    await expect.poll(() => page.locator('tr[data-destination]').count(), { timeout: 10_000 }).toBe(2);
    const rows = await page.locator('tr[data-destination]').allTextContents();
    expect(rows.join('\n')).toContain('chat.postMessage to U0123ABCD');
    // Digests and owners' routes offer it by where it posts, not as a bare "slack".
    await expect.poll(() => page.locator('select[name="destination_id"] option').allTextContents(), { timeout: 10_000 }).toContain('slack to U0123ABCD');
    expect(await page.content()).not.toContain('xoxb-settings-page-token');
  });

  it('when JavaScript is off, then every field shows, each label naming its types', async () => {
    const page = await settingsOf('admin', { javaScriptEnabled: false });
    expect(await visibleFields(page)).toEqual([
      'dest-type',
      'dest-url',
      'dest-channel',
      'dest-repo',
      'dest-project',
      'dest-envs',
      'dest-when',
      'dest-secret',
      'dest-token',
    ]);
    expect(await page.getByLabel('URL (Slack incoming webhook, Teams Workflows, webhook)').isVisible()).toBe(true);
  });
});
