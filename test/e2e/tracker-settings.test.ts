import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../server/src/principals.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// The issue tracker's settings on Settings, in real Chromium: an admin sets Jira through the form
// (only the chosen tracker's fields show and are sent; the token is write-only and kept when left
// out), then a GitHub destination with the broken-test rule; every value the page shows or puts in
// a field is escaped; a viewer reads them and gets no form.
let server: TestServer;
let browser: Browser;
let api: ReturnType<typeof client>;
let projectId: number;
let destinationId: number;
const people = new Map<Role, string>();
const clock = new TestClock('live');
const HOSTILE_URL = 'http://127.0.0.1:9/jira?q="><b id=injected>bold</b>';

beforeAll(async () => {
  server = await startTestServer({ clock, env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
  const project = await seedProject(server.sql, 'Tracker shop');
  projectId = project.projectId;
  api = client(server.url, project.key);
  destinationId = (await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).body.data.destination.id;
  for (const role of ['viewer', 'admin'] as const) people.set(role, (await seedUser(server.sql, [projectId], { role })).userId);
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function settingsOf(role: Role): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, people.get(role) as string, clock.now)}`);
  await page.goto(`${server.url}/projects/${projectId}/settings`);
  return page;
}

const visibleFields = (page: Page) =>
  page
    .getByRole('region', { name: /tracker/ })
    .locator('label')
    .evaluateAll((labels) =>
      labels.filter((label) => !(label as HTMLElement).hidden && label.getClientRects().length > 0).map((label) => label.getAttribute('for')),
    );
const saved = async () => (await api.get('/api/tracker-settings')).body.data.tracker_settings;

describe('the issue tracker on Settings', () => {
  it("when an admin chooses Jira, then only its fields show; saved, the settings are the API's and the token is never shown", async () => {
    const page = await settingsOf('admin');
    expect(await page.locator('[data-tracker-settings]').textContent()).toContain('No issue tracker');
    const common = ['trk-branch', 'trk-new-groups', 'trk-flaky', 'trk-broken', 'trk-broken-after', 'trk-closed', 'trk-passes', 'trk-close'];
    expect(await visibleFields(page)).toEqual(['trk-tracker', 'trk-destination', ...common]);
    await page.locator('#trk-tracker').selectOption('jira');
    expect(await visibleFields(page)).toEqual([
      'trk-tracker',
      'trk-jira-url',
      'trk-jira-project',
      'trk-jira-type',
      'trk-jira-email',
      'trk-jira-token',
      ...common,
    ]);
    expect(await seriousViolations(page)).toEqual([]);

    await page.locator('#trk-jira-url').fill(HOSTILE_URL);
    await page.locator('#trk-jira-project').fill('OPS');
    await page.locator('#trk-jira-email').fill('bot@example.com');
    await page.locator('#trk-jira-token').fill('jira-secret-token');
    await page.locator('#trk-flaky').selectOption('true');
    await page.getByRole('button', { name: 'Save tracker' }).click();
    await expect.poll(async () => (await saved())?.tracker, { timeout: 10_000 }).toBe('jira');
    expect(await saved()).toMatchObject({
      destination_id: null,
      jira: { url: HOSTILE_URL, project_key: 'OPS', issue_type: 'Bug', email: 'bot@example.com', has_token: true },
      create_for_flaky_tests: true,
      create_for_broken_tests: false,
      broken_after_failures: 3,
    });

    await page.waitForLoadState('load');
    await expect.poll(() => page.locator('[data-tracker-settings]').textContent(), { timeout: 10_000 }).toContain('the Jira project OPS on');
    expect(await page.locator('[data-tracker-settings]').textContent()).toContain(`on ${HOSTILE_URL} (Bug; token set)`);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.locator('#trk-jira-url').inputValue()).toBe(HOSTILE_URL);
    expect(await page.content()).not.toContain('jira-secret-token');
    expect(await page.locator('#trk-jira-token').inputValue()).toBe('');
  });

  it('when the admin saves again without the token, then it is kept; switched to the GitHub destination with the broken rule, the Jira fields are not sent', async () => {
    const page = await settingsOf('admin');
    await page.locator('#trk-jira-project').fill('QA');
    await page.getByRole('button', { name: 'Save tracker' }).click();
    await expect.poll(async () => (await saved())?.jira?.project_key, { timeout: 10_000 }).toBe('QA');
    expect((await saved()).jira.has_token).toBe(true);

    await page.waitForLoadState('load');
    await expect.poll(() => page.locator('[data-tracker-settings]').textContent(), { timeout: 10_000 }).toContain('QA');
    await page.locator('#trk-tracker').selectOption('github');
    await page.locator('#trk-destination').selectOption(String(destinationId));
    await page.locator('#trk-broken').selectOption('true');
    await page.locator('#trk-broken-after').fill('4');
    await page.getByRole('button', { name: 'Save tracker' }).click();
    await expect.poll(async () => (await saved())?.tracker, { timeout: 10_000 }).toBe('github');
    expect(await saved()).toMatchObject({ destination_id: destinationId, jira: null, create_for_broken_tests: true, broken_after_failures: 4 });
    await page.waitForLoadState('load');
    await expect
      .poll(() => page.locator('[data-tracker-settings]').textContent(), { timeout: 10_000 })
      .toContain(
        'GitHub issues of acme/shop; default branch main; issues for new failure groups: no; for tests turned flaky: yes; for tests broken 4 runs in a row: yes',
      );
  });

  it("when a wrong value is saved, then the API's refusal shows in the form", async () => {
    const page = await settingsOf('admin');
    await page.locator('#trk-broken-after').evaluate((input: HTMLInputElement) => {
      input.removeAttribute('min');
      input.value = '1';
    });
    await page.getByRole('button', { name: 'Save tracker' }).click();
    await expect
      .poll(
        () =>
          page
            .getByRole('region', { name: /tracker/ })
            .getByRole('alert')
            .first()
            .textContent(),
        { timeout: 10_000 },
      )
      .toContain('broken_after_failures');
    expect((await saved()).broken_after_failures).toBe(4);
  });

  it("when a viewer opens Settings, then the tracker's settings show and no form or removal does", async () => {
    const page = await settingsOf('viewer');
    expect(await page.locator('[data-tracker-settings]').textContent()).toContain('GitHub issues of acme/shop');
    expect(await page.getByRole('button', { name: 'Save tracker' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Remove tracker' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('when the admin removes the tracker, then there is none', async () => {
    const page = await settingsOf('admin');
    await page.getByRole('button', { name: 'Remove tracker' }).click();
    await expect.poll(async () => saved(), { timeout: 10_000 }).toBeNull();
  });
});
