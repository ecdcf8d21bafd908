import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// A team in the dashboard, in real Chromium: an admin brings a person in by email, a viewer is
// offered nothing it may not do, and the last admin stays.
let server: TestServer;
let browser: Browser;
let projectId: number;
let runId: number;
let admin: { userId: string; key: string; email: string };
let viewer: { userId: string; key: string; email: string };
const clock = new TestClock('live');

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql, 'Team shop');
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'staging');
  const api = client(server.url, project.key);
  runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1))] });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(testId(1), 'unexpected') });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
  admin = await seedUser(server.sql, [projectId], { role: 'admin' });
  viewer = await seedUser(server.sql, [projectId], { role: 'viewer' });
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signedIn(userId: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, clock.now)}`);
  return page;
}

describe('members in the dashboard', () => {
  it('when an admin invites an email, then the link opened in another browser signs the person in, in the project as a member', async () => {
    const page = await signedIn(admin.userId);
    await page.goto(`${server.url}/projects/${projectId}/members`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Email').fill('newcomer@example.com');
    await page.locator('#person-role').selectOption('member');
    await page.getByRole('button', { name: 'Add' }).click();
    const shown = page.getByLabel('Copy it now: it is shown this once');
    await expect.poll(() => shown.inputValue(), { timeout: 10_000 }).toMatch(/\/invitations\/accept\?token=/);
    const link = new URL(await shown.inputValue());

    const newcomer = await (await browser.newContext()).newPage();
    await newcomer.goto(`${server.url}${link.pathname}${link.search}`);
    await newcomer.waitForURL(`${server.url}/projects/${projectId}/runs`);
    await expect.poll(() => newcomer.getByRole('heading', { name: 'Runs of Team shop' }).count()).toBe(1);
    await newcomer.goto(`${server.url}/projects/${projectId}/members`);
    expect(await newcomer.locator('tr[data-member="newcomer@example.com"] td[data-role]').textContent()).toBe('member');
  });

  it('when the invited email has an account by the time the link is opened, then the page asks to sign in as it, and signed in the link joins', async () => {
    const invitation = await client(server.url, admin.key, { 'x-project-id': String(projectId) }).post('/api/members', {
      email: 'later@example.com',
      role: 'viewer',
    });
    const link = new URL(invitation.body.data.invitation.url as string);
    const later = await createUser(server.sql, { email: 'later@example.com', name: 'Later', picture: '' });

    const stranger = await (await browser.newContext()).newPage();
    await stranger.goto(`${server.url}${link.pathname}${link.search}`);
    expect(await stranger.getByRole('alert').textContent()).toContain('This invitation is for later@example.com, which has an account: sign in as it');
    expect(await seriousViolations(stranger)).toEqual([]);
    expect(await stranger.context().cookies()).toEqual([]);

    const owner = await signedIn(later);
    await owner.goto(`${server.url}${link.pathname}${link.search}`);
    await owner.waitForURL(`${server.url}/projects/${projectId}/runs`);
    await owner.goto(`${server.url}/projects/${projectId}/members`);
    expect(await owner.locator('tr[data-member="later@example.com"] td[data-role]').textContent()).toBe('viewer');
  });

  it('when an admin makes a named key on the keys page, then it is listed at once by its name, its secret shown once in the form, and the change is in the trail', async () => {
    const page = await signedIn(admin.userId);
    await page.goto(`${server.url}/projects/${projectId}/keys`);
    expect(await seriousViolations(page)).toEqual([]);
    // Watched for a reload, which would lose the secret shown once.
    await page.evaluate(() => ((window as unknown as { unreloaded: boolean }).unreloaded = true));
    await page.getByLabel('Name (what it is for)').fill('Staging CI');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('Copy it now: it is shown this once');
    await expect.poll(() => shown.inputValue(), { timeout: 10_000 }).toMatch(/^prc_p_[0-9a-f]{12}_[0-9a-f]{48}$/);
    const made = await shown.inputValue();
    const [, , id, secret] = made.split('_') as [string, string, string, string];
    const row = page.locator(`tr[data-key="${id}"]`);
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.locator('td[data-name]').textContent()).toBe('Staging CI');
    expect(await row.textContent()).toContain('report');
    expect(await page.locator('#key-list').innerHTML()).not.toContain(secret);
    expect(await page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded)).toBe(true);
    // A second key, without a name, is listed at once too.
    await page.getByLabel('Name (what it is for)').fill('');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.locator('tr[data-key]').count(), { timeout: 10_000 }).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    // A key without a name is listed by its kind and the day it was made.
    const unnamed = page.locator('tr[data-key] td[data-name]').filter({ hasNotText: 'Staging CI' });
    expect(await unnamed.allTextContents()).toContain(`report key of ${new Date().toISOString().slice(0, 10)}`);
    await page.goto(`${server.url}/projects/${projectId}/audit`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.locator('table').textContent()).toContain('key.created');
  });

  it("when the project's last admin tries to leave, then the page says why and they stay", async () => {
    const page = await signedIn(admin.userId);
    await page.goto(`${server.url}/projects/${projectId}/members`);
    await page.locator(`tr[data-member="${admin.email}"]`).getByRole('button', { name: 'Remove' }).click();
    await expect
      .poll(() => page.locator(`tr[data-member="${admin.email}"] form[data-api^="DELETE"] [role="alert"]`).textContent(), { timeout: 10_000 })
      .toContain("is the project's last admin");
    const [row] = await server.sql<{ role: string }[]>`select role from memberships where project_id = ${projectId} and user_id = ${admin.userId}`;
    expect(row?.role).toBe('admin');
  });
});

describe('a viewer', () => {
  it('when a viewer opens the pages, then no action is offered, and the API refuses what they try with their cookie and CSRF token', async () => {
    const page = await signedIn(viewer.userId);
    for (const path of ['runs', `runs/${runId}`, 'environments', 'snoozes', 'settings', 'members', 'failure-groups']) {
      await page.goto(`${server.url}/projects/${projectId}/${path}`);
      expect(await page.locator('form[data-api]').count(), path).toBe(0);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${server.url}/projects/${projectId}/members`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.getByRole('link', { name: 'Keys' }).count()).toBe(0);
    // The same call the page would make, with the session's cookie and its CSRF token.
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const answer = await page.evaluate(
      async ({ id, token }) => {
        const response = await fetch(`/api/test-runs/${id}/cancel`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-project-id': document.querySelector('meta[name="project-id"]')?.getAttribute('content') ?? '',
            'x-csrf-token': token ?? '',
          },
          body: '{}',
        });
        return { status: response.status, body: await response.json() };
      },
      { id: runId, token: csrf },
    );
    expect(answer.status).toBe(403);
    expect(answer.body.error.message).toBe('POST /api/test-runs/{id}/cancel needs the role member (a key of scope report); this request comes with a viewer');
    const keys = await page.goto(`${server.url}/projects/${projectId}/keys`);
    expect(keys?.status()).toBe(403);
  });
});
