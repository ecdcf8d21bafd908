import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// The dashboard in real Chromium: a person signs in by a one-time link, sees their projects and
// their runs, and signs out.
let server: TestServer;
let browser: Browser;
let projectId: number;
let otherProjectId: number;
let userId: string;
let api: ReturnType<typeof client>;
const clock = new TestClock('live');

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  api = client(server.url, project.key);
  await seedEnvironment(server.sql, projectId, 'staging');
  await seedEnvironment(server.sql, projectId, 'production');
  otherProjectId = (await seedProject(server.sql, 'Elsewhere')).projectId;
  userId = (await seedUser(server.sql, [projectId])).userId;
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A run reported through the API: `ended` ends it passed. */
async function reportRun(environment: string, branch: string, ended: boolean): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment, branch })).body.data.test_run.id as number;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1))], complete: true });
  if (ended) await endRun(runId);
  return runId;
}

async function endRun(runId: number): Promise<void> {
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(testId(1), 'expected') });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
}

async function signedInPage(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  const token = await createLoginLink(server.sql, userId, clock.now);
  await page.goto(`${server.url}/sign-in/link?token=${token}`);
  return page;
}

describe('signing in', () => {
  it('when a signed-out visitor opens the dashboard, then they are sent to sign in', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${server.url}/projects/${projectId}/runs`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in to Proctor' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('when the CLI makes a sign-in link, then it prints the URL alone, which signs in once and lands on the projects', async () => {
    const cli = spawnProctor(['user', 'login-link', '--user', userId], { DATABASE_URL: server.db.url, PUBLIC_URL: server.url });
    expect(await cli.exited).toBe(0);
    const url = cli.output().trim();
    expect(url).toMatch(new RegExp(`^${server.url}/sign-in/link\\?token=[\\w-]{43}$`));
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe('/');
    await expect.poll(() => page.getByRole('link', { name: 'Shop' }).count()).toBe(1);
    expect(await page.getByText('Elsewhere').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'proctor_session', httpOnly: true, sameSite: 'Lax', secure: false });

    const again = await (await browser.newContext()).newPage();
    const response = await again.goto(url);
    expect(response?.status()).toBe(400);
    expect(await again.getByRole('alert').textContent()).toContain('This sign-in link has been used, has expired');
  });

  it('when a link is older than 15 minutes, then it is refused', async () => {
    const token = await createLoginLink(server.sql, userId, new Date(Date.now() - 16 * 60_000));
    const response = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('when the service is served on https, then the session cookie is Secure', async () => {
    const https = await startTestServer({ env: { PUBLIC_URL: 'https://proctor.example.com' } });
    try {
      const { userId: person } = await seedUser(https.sql, []);
      const token = await createLoginLink(https.sql, person, new Date());
      const response = await fetch(`${https.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('set-cookie')).toMatch(/^proctor_session=[\w%-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
    } finally {
      await https.close();
    }
  });
});

describe('the runs of a project', () => {
  it('when runs are filtered by environment, branch and state, then only those are listed, newest first', async () => {
    const older = await reportRun('staging', 'main', true);
    const newer = await reportRun('staging', 'main', true);
    await reportRun('production', 'main', true);
    await reportRun('staging', 'feature/x', true);
    const page = await signedInPage();
    await page.getByRole('link', { name: 'Shop' }).click();
    await page.getByLabel('Environment').selectOption('staging');
    await page.getByLabel('Branch').fill('main');
    await page.getByLabel('State').selectOption('passed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/environment=staging/);
    const listed = await page.locator('tbody tr').evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-run'))));
    expect(listed).toEqual([newer, older]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('when a run is under way, then its row updates by itself once it ends', async () => {
    const runId = await reportRun('production', 'live', false);
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs?branch=live`);
    const row = page.locator(`tr[data-run="${runId}"]`);
    expect(await row.locator('.state').textContent()).toBe('running');
    await endRun(runId);
    await expect.poll(() => row.locator('.state').textContent(), { timeout: 15_000 }).toBe('passed');
  });

  it("when another project's runs are asked for, then the page does not exist for this person", async () => {
    const page = await signedInPage();
    const response = await page.goto(`${server.url}/projects/${otherProjectId}/runs`);
    expect(response?.status()).toBe(404);
    // A page for a person, not the API's JSON.
    expect(await page.getByRole('heading', { name: 'Not found' }).count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toBe('project not found');
  });
});

describe("the dashboard's icon", () => {
  it('when a project page, a run page, its shared summary and an error page load, then each shows the icon and the browser asks for nothing that fails', async () => {
    const runId = await reportRun('staging', 'main', true);
    const { body } = await api.get(`/api/test-runs/${runId}`);
    const failed: string[] = [];
    const page = await signedInPage();
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().includes(`/projects/${otherProjectId}/`)) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().includes('404 (Not Found)')) failed.push(`console: ${message.text()}`);
    });
    for (const url of [
      `/projects/${projectId}/runs`,
      `/projects/${projectId}/runs/${runId}`,
      body.data.test_run.testRun.summary_url as string,
      `/projects/${otherProjectId}/runs`,
    ]) {
      await page.goto(new URL(url, server.url).toString());
      expect(await page.locator('link[rel="icon"]').getAttribute('href'), url).toBe('/favicon.svg');
    }
    const icon = await page.request.get(`${server.url}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toMatch(/^image\/svg\+xml/);
    await page.goto(`${server.url}/favicon.svg`);
    expect(await page.locator('svg rect').count()).toBe(1);
    expect(failed).toEqual([]);
  });
});

describe('a run, and acting on it', () => {
  /** A run of `environment` whose test 2 fails and test 1 passes, ended. */
  async function failedRun(): Promise<number> {
    const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'main' })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, {
      tests: [listedTest(testId(1)), listedTest(testId(2), { title: 'checkout works' })],
      complete: true,
    });
    await api.post(`/api/test-runs/${runId}/results`, {
      shard: 1,
      results: [...attemptsOf(testId(1), 'expected'), ...attemptsOf(testId(2), 'unexpected', 'Error: the basket is empty')],
    });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
    return runId;
  }

  it("when a failure is snoozed from the run page, then the snooze is the person's, and the next run with the same failure passes", async () => {
    const runId = await failedRun();
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    await expect.poll(() => page.getByText('Error: the basket is empty').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    const row = page.locator('tr', { hasText: 'checkout works' });
    await row.getByText('Snooze', { exact: true }).click();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await row.getByLabel('Until').fill(tomorrow);
    await row.getByLabel('Reason').fill('the basket service is down');
    await row.getByRole('button', { name: 'Snooze this test' }).click();
    await expect.poll(async () => (await api.get('/api/snoozes')).body.data.snoozes.length).toBe(1);
    const [snooze] = (await api.get('/api/snoozes')).body.data.snoozes;
    expect(snooze).toMatchObject({
      test_ids: [testId(2)],
      created_by: userId,
      created_from_test_run_id: runId,
      description: 'the basket service is down',
      source: 'user',
    });
    expect(snooze.snooze_until).toBe(`${tomorrow}T23:59:59.000Z`);
    const next = await failedRun();
    expect((await api.get(`/api/test-runs/${next}`)).body.data.test_run.testRun.state).toBe('passed');
    await page.goto(`${server.url}/projects/${projectId}/runs/${next}`);
    expect(await page.locator('h1 .state').textContent()).toBe('passed');
    await api.delete(`/api/snoozes/${snooze.id}`);
  });

  it('when a run under way is cancelled from its page, then it ends cancelled and the page shows it', async () => {
    const runId = await reportRun('production', 'cancel-me', false);
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.locator('h1 .state').textContent(), { timeout: 10_000 }).toBe('cancelled');
    expect((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun.state).toBe('cancelled');
  });

  it('when a run is rerun whole, then the new run holds every test', async () => {
    const runId = await failedRun();
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    await page.getByRole('button', { name: 'Rerun', exact: true }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/runs/(?!${runId}$)\\d+$`));
    const rerunId = Number(new URL(page.url()).pathname.split('/').pop());
    const [rerun] = await server.sql<{ rerun_source_id: number; test_case_ids: string[]; rerun_only_failed: boolean }[]>`
      select rerun_source_id, test_case_ids, rerun_only_failed from test_runs where id = ${rerunId}`;
    expect(rerun).toMatchObject({ rerun_source_id: runId, test_case_ids: [], rerun_only_failed: false });
  });

  it('when the failed tests are rerun, then the new run holds only them and its page opens', async () => {
    const runId = await failedRun();
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    await page.getByRole('button', { name: 'Rerun failed tests' }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/runs/(?!${runId}$)\\d+$`));
    const rerunId = Number(new URL(page.url()).pathname.split('/').pop());
    const [rerun] = await server.sql<{ rerun_source_id: number; test_case_ids: string[]; origin: string }[]>`
      select rerun_source_id, test_case_ids, origin from test_runs where id = ${rerunId}`;
    expect(rerun).toMatchObject({ rerun_source_id: runId, test_case_ids: [testId(2)], origin: 'api' });
  });

  it('when a run is pinned and unpinned from its page, then the API holds it so and the page says it is kept', async () => {
    const runId = await failedRun();
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    await page.getByRole('button', { name: 'Pin (keep whatever the retention policy)' }).click();
    await expect.poll(() => page.locator('[data-retention="pinned"]').count(), { timeout: 10_000 }).toBe(1);
    expect((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun.pinned).toBe(true);
    await page.getByRole('button', { name: 'Unpin' }).click();
    await expect.poll(() => page.locator('[data-retention="pinned"]').count(), { timeout: 10_000 }).toBe(0);
    expect((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun.pinned).toBe(false);
  });

  it('when a destination is added and removed and the retention policy saved on the settings page, then the API holds each, and a refusal names its field', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/settings`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Type').selectOption('github');
    await page.getByLabel('Repository (GitHub, owner/name)').fill('acme/shop');
    await page.getByRole('button', { name: 'Add destination' }).click();
    // The new destination's own form says it (Settings has other forms above it).
    const destinationForm = page.getByRole('region', { name: 'New destination' });
    await expect.poll(() => destinationForm.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('body.token');

    // The repository typed for GitHub is hidden with its type, and not sent.
    await page.getByLabel('Type').selectOption('webhook');
    expect(await page.getByLabel('Repository (GitHub, owner/name)').isHidden()).toBe(true);
    await page.getByLabel('URL (Slack incoming webhook, Teams Workflows, webhook)').fill('https://hooks.example.com/proctor');
    await page.getByLabel('Environments (slugs, comma-separated; none: all)').fill('staging');
    await page.getByLabel('When').selectOption('failed');
    await page.getByLabel('Webhook secret').fill('a secret of the receiver');
    await page.getByRole('button', { name: 'Add destination' }).click();
    await expect.poll(() => page.locator('tr[data-destination]').count(), { timeout: 10_000 }).toBe(1);
    const [destination] = (await api.get('/api/notification-destinations')).body.data.destinations;
    expect(destination).toMatchObject({
      type: 'webhook',
      url: 'https://hooks.example.com/••••',
      environments: ['staging'],
      when: 'failed',
      has_secret: true,
    });
    expect(await page.content()).not.toContain('a secret of the receiver');
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Results (days)').fill('120');
    await page.getByLabel('Attachments (days)').fill('14');
    const reloaded = page.waitForEvent('load');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await reloaded;
    expect((await api.get('/api/retention-policy')).body.data.policy).toEqual({ results_days: 120, artifacts_days: 14 });

    await page.locator(`tr[data-destination="${destination.id}"]`).getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.locator('tr[data-destination]').count(), { timeout: 10_000 }).toBe(0);
    expect((await api.get('/api/notification-destinations')).body.data.destinations).toEqual([]);
  });

  it('when destinations carry credentials in their URLs, then answers, the settings page and the log show them masked', async () => {
    const secrets = ['XoXbSlackSecret42', 'basic-auth-password', 'query-token-value', 'api-key-value'];
    const slack = await api.post('/api/notification-destinations', { type: 'slack', url: `https://hooks.slack.com/services/T0ABC/B0DEF/${secrets[0]}` });
    const hook = await api.post('/api/notification-destinations', {
      type: 'webhook',
      url: `https://ci:${secrets[1]}@hooks.example.com/proctor?token=${secrets[2]}&api_key=${secrets[3]}&team=web`,
    });
    expect(slack.body.data.destination).toMatchObject({ url: 'https://hooks.slack.com/services/T…/B…/••••', has_secret: true });
    expect(hook.body.data.destination).toMatchObject({ url: 'https://hooks.example.com/••••', has_secret: true });
    const changed = await api.patch(`/api/notification-destinations/${hook.body.data.destination.id}`, { when: 'failed' });
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/settings`);
    expect(await page.locator(`tr[data-destination="${slack.body.data.destination.id}"]`).textContent()).toContain(
      'https://hooks.slack.com/services/T…/B…/••••',
    );
    const shown = [
      slack.text,
      hook.text,
      changed.text,
      (await api.get('/api/notification-destinations')).text,
      (await api.get(`/api/notification-destinations/${slack.body.data.destination.id}`)).text,
      await page.content(),
      server.logs.join('\n'),
    ].join('\n');
    for (const secret of secrets) expect(shown).not.toContain(secret);
    await api.delete(`/api/notification-destinations/${slack.body.data.destination.id}`);
    await api.delete(`/api/notification-destinations/${hook.body.data.destination.id}`);
  });

  it('when a run holds more passed tests than a page lists, then the first 200 show with a link to every test', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'big' })).body.data.test_run.id as number;
    const ids = Array.from({ length: 205 }, (_, i) => testId(1000 + i));
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)), complete: true });
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.flatMap((id) => attemptsOf(id, 'expected')) });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    const passedRows = page.locator('h2:text("Passed and skipped") + table tbody tr');
    expect(await passedRows.count()).toBe(200);
    expect(await page.locator('table.breakdown td').nth(1).textContent()).toBe('205');
    await page.getByRole('link', { name: 'show every test' }).click();
    await page.waitForURL(/all=1$/);
    expect(await passedRows.count()).toBe(205);
  });

  it("when another project's run is asked for under this project, then it does not exist", async () => {
    const other = client(server.url, (await seedProject(server.sql, 'Third')).key);
    await other.post('/api/environments', { name: 'x', slug: 'x' });
    const foreign = (await other.post('/api/test-runs/report', { environment: 'x' })).body.data.test_run.id;
    const page = await signedInPage();
    expect((await page.goto(`${server.url}/projects/${projectId}/runs/${foreign}`))?.status()).toBe(404);
  });
});

describe('environments and snoozes', () => {
  it('when an environment is created and edited from its page, then the API holds it, and its badge shows with its Markdown', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/environments`);
    expect(await seriousViolations(page)).toEqual([]);
    const create = page.locator('section.create');
    await create.getByLabel('Name').fill('Nightly');
    await create.getByLabel('Slug').fill('bad slug');
    await create.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => create.getByRole('alert').textContent()).toContain('slug');
    await create.getByLabel('Slug').fill('nightly');
    await create.getByRole('button', { name: 'Create' }).click();
    const row = page.locator('tr[data-environment="nightly"]');
    await expect.poll(() => row.count()).toBe(1);
    await row.getByText('Edit', { exact: true }).click();
    await row.getByLabel('Schedule (cron, UTC)').fill('0 6 * * 1-5');
    await row.getByLabel('Runner projects (comma-separated)').fill('chromium, firefox');
    await row.getByLabel('Burn-in repeats of new tests').fill('3');
    await row.getByLabel('Stop a run after this many failures').fill('5');
    await row.getByLabel("Order of a run's tests").selectOption('failures-first');
    await row.getByLabel('Affected runs: a full run after this many in a row').fill('10');
    await row.getByLabel('Playwright arguments (space-separated; values with =)').fill('--workers=2  --retries=1');
    await row.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'nightly')?.scheduled_trigger)
      .toBe('0 6 * * 1-5');
    const saved = (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'nightly');
    expect(saved).toMatchObject({
      name: 'Nightly',
      runner_projects_match: ['chromium', 'firefox'],
      runner_projects_ignore: [],
      burn_in_repeats: 3,
      playwright_args: ['--workers=2', '--retries=1'],
      max_failures: 5,
      order_strategy: 'failures-first',
      full_run_every: 10,
    });
    const badge = page.locator('tr[data-environment="nightly"] img');
    await expect.poll(() => badge.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await page.locator('tr[data-environment="nightly"] input.snippet').inputValue()).toBe(
      `[![Nightly tests](${server.url}/badges/${projectId}/nightly.svg)](${server.url}/projects/${projectId}/runs?environment=nightly)`,
    );
  });

  it('when a run is triggered from an environment, then the new run opens', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/environments`);
    const row = page.locator('tr[data-environment="staging"]');
    await row.getByLabel('Branch').fill('release');
    await row.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/runs/\\d+$`));
    expect(await page.locator('h1 .state').textContent()).toBe('pending');
    expect(await page.locator('.meta').textContent()).toContain('branch release');
    // Or against a build: its URL is the run's, and the suite's BASE_URL.
    await page.goto(`${server.url}/projects/${projectId}/environments`);
    await row.getByLabel("or a build's URL").fill('https://preview-42.example.com');
    await row.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/runs/\\d+$`));
    expect(await page.locator('.meta').textContent()).toContain('build https://preview-42.example.com');
  });

  it('when "Only affected tests" is ticked before "Run now", then the run is triggered with affected, and without it the next is not', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/environments`);
    expect(await seriousViolations(page)).toEqual([]);
    const row = page.locator('tr[data-environment="staging"]');
    const affected = row.getByRole('checkbox', { name: 'Only affected tests' });
    expect(await affected.isChecked()).toBe(false);
    await affected.check();
    await row.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/runs/\\d+$`));
    const asked = Number(new URL(page.url()).pathname.split('/').pop());
    await page.goto(`${server.url}/projects/${projectId}/environments`);
    await row.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL((url) => new RegExp(`/projects/${projectId}/runs/\\d+$`).test(url.pathname) && !url.pathname.endsWith(`/${asked}`));
    const plain = Number(new URL(page.url()).pathname.split('/').pop());
    const rows = await server.sql<{ id: number; affected: boolean }[]>`select id, affected from test_runs where id in (${asked}, ${plain}) order by id`;
    expect(rows).toEqual([
      { id: asked, affected: true },
      { id: plain, affected: false },
    ]);
  });

  it('when a snooze is made, expired and deleted from the snoozes page, then the API follows each step', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/snoozes`);
    expect(await seriousViolations(page)).toEqual([]);
    const create = page.locator('section.create');
    await create.getByLabel('Test ids (comma-separated)').fill(`${testId(5)}, ${testId(6)}`);
    await create.getByLabel('Until').fill(new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10));
    await create.getByLabel('Where').selectOption({ label: 'staging' });
    await create.getByLabel('Reason').fill('flaky on staging');
    await create.getByRole('button', { name: 'Snooze' }).click();
    const row = page.locator('tr', { hasText: 'flaky on staging' });
    await expect.poll(() => row.count()).toBe(1);
    const [made] = (await api.get('/api/snoozes')).body.data.snoozes.filter((s: { description: string }) => s.description === 'flaky on staging');
    expect(made).toMatchObject({ test_ids: [testId(5), testId(6)].sort(), created_by: userId });
    // The form reloads the page once the API answered: the next navigation waits for that load.
    const reloaded = page.waitForEvent('load');
    await row.getByRole('button', { name: 'Expire now' }).click();
    await reloaded;
    await expect.poll(() => page.locator('tr', { hasText: 'flaky on staging' }).count()).toBe(0);
    await page.goto(`${server.url}/projects/${projectId}/snoozes?status=expired`);
    const expired = page.locator('tr', { hasText: 'flaky on staging' });
    expect(await expired.count()).toBe(1);
    await expired.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.locator('tr', { hasText: 'flaky on staging' }).count()).toBe(0);
    expect((await api.get('/api/snoozes?status=all')).body.data.snoozes.some((s: { id: number }) => s.id === made.id)).toBe(false);
  });
});

describe('failure groups', () => {
  it('when a failure group is opened from a run, then a diagnosis and a status are set, and a test detached, through the API', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, {
      tests: [listedTest(testId(7), { title: 'pays by card', tags: ['@payments'] })],
      complete: true,
    });
    const attempts = attemptsOf(testId(7), 'unexpected', 'Error: card declined');
    // The reporter names the group of a final failure, and attaches it.
    (attempts.at(-1)?.final as { failure_group_id: string | null }).failure_group_id = 'card-declined';
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attempts });
    expect((await api.post('/api/failure-groups/card-declined/members', { test_run_id: runId, test_case_id: testId(7) })).status).toBe(200);
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    // The group is named by its failure, on the run's page as everywhere.
    await page.getByRole('link', { name: 'card declined', exact: true }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/failure-groups/card-declined$`));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('card declined');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Title').fill('The sandbox declines cards');
    await page.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(async () => (await api.get('/api/failure-groups/card-declined')).body.data.failure_group.title).toBe('The sandbox declines cards');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('The sandbox declines cards');
    await page.getByLabel('Category').fill('product bug');
    await page.getByLabel('Summary').fill('the payment sandbox declines every card');
    await page.getByRole('button', { name: 'Set diagnosis' }).click();
    await expect.poll(async () => (await api.get('/api/failure-groups/card-declined')).body.data.failure_group.diagnosis?.category).toBe('product bug');
    expect((await api.get('/api/failure-groups/card-declined')).body.data.failure_group.diagnosis).toMatchObject({
      summary: 'the payment sandbox declines every card',
      author: userId,
    });
    await page.getByLabel('Status').selectOption('resolved');
    await page.getByRole('button', { name: 'Set status' }).click();
    await expect.poll(async () => (await api.get('/api/failure-groups/card-declined')).body.data.failure_group.status).toBe('resolved');
    await page
      .locator(`tr[data-member="${testId(7)}"]`)
      .getByRole('button', { name: 'Detach' })
      .click();
    await expect.poll(async () => (await api.get('/api/failure-groups/card-declined')).body.data.members[0].state).toBe('detached');
    // The page reloads after the action: the next navigation waits for it.
    await expect.poll(() => page.locator(`tr[data-member="${testId(7)}"]`).textContent()).toContain('detached');
    await page.goto(`${server.url}/projects/${projectId}/failure-groups?status=resolved`);
    expect(await page.locator('tr[data-group="card-declined"] a').textContent()).toBe('The sandbox declines cards');
    expect(await seriousViolations(page)).toEqual([]);
  });
});

describe('analytics', () => {
  it('when the analytics page is opened, then daily runs, their pass rate and test counts are drawn, and the flakiest test is ranked', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(8), { title: 'sometimes slow' })], complete: true });
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(testId(8), 'flaky') });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed' });
    await waitForRollups(server.sql);
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/analytics?days=7`);
    expect(await seriousViolations(page)).toEqual([]);
    const runsChart = page.getByRole('group', { name: /^Runs a day over 7 days/ });
    expect(await runsChart.locator('rect').count()).toBeGreaterThan(0);
    expect(await runsChart.locator('polyline').count()).toBe(1);
    expect(await page.getByRole('group', { name: 'Tests run a day over 7 days' }).locator('circle').count()).toBe(1);
    const flakiest = page.locator('h2:text("Flakiest tests") + table');
    expect(await flakiest.locator('tbody tr').first().textContent()).toContain('sometimes slow');
    await page.getByLabel('Environment').selectOption({ label: 'production' });
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/environment_id=/);
    expect(await page.locator('h2:text("Flakiest tests") + p.empty').count()).toBe(1);
  });
});

describe('tests', () => {
  it('when tests are searched and ranked, then a test opens on its history strip, its duration chart, its failure groups and snoozes', async () => {
    await waitForRollups(server.sql);
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/tests?days=7`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Search', { exact: true }).fill('pays by');
    await page.getByLabel('Rank by').selectOption('fail_rate');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(/search=pays/);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-test')).toBe(testId(7));
    expect(await rows.first().getByRole('img').getAttribute('aria-label')).toBe('Last 1 runs, oldest first: 1 failed');
    await rows.first().getByRole('link', { name: 'pays by card' }).click();
    await page.waitForURL(new RegExp(`/tests/${testId(7)}$`));
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('pays by card');
    expect(
      await page
        .getByRole('group', { name: /^Duration and outcome of the last 1 runs/ })
        .locator('a.point rect[fill="#cf222e"]')
        .count(),
    ).toBe(1);
    expect(await page.locator(`a[href="/projects/${projectId}/failure-groups/card-declined"]`).count()).toBe(1);
    // By tag: only the tagged test.
    await page.goto(`${server.url}/projects/${projectId}/tests?days=7`);
    await page.getByLabel('Tag').fill('payments');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(/tag=payments/);
    expect(await page.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-test')))).toEqual([testId(7)]);
    // Ranked by mean duration: the slow test first (attempts of 100 ms, two of them for a failure).
    const slowest = await signedInPage();
    await slowest.goto(`${server.url}/projects/${projectId}/tests?order_by=duration&days=7`);
    const first = slowest.locator('tbody tr').first();
    expect(await first.locator('td').nth(4).textContent()).toBe('200 ms');
  });
});

describe('forged requests and signing out', () => {
  it('when a call that changes something comes with the session but without its CSRF token, then it is refused', async () => {
    const token = await createLoginLink(server.sql, userId, clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const page = await fetch(`${server.url}/`, { headers: { cookie } });
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1] as string;
    const snooze = { test_ids: [testId(1)], snooze_until: new Date(Date.now() + 3_600_000).toISOString() };
    const headers = { cookie, 'content-type': 'application/json', 'x-project-id': String(projectId) };
    const forged = await fetch(`${server.url}/api/snoozes`, { method: 'POST', headers, body: JSON.stringify(snooze) });
    expect(forged.status).toBe(403);
    expect((await forged.json()).error.message).toContain('x-csrf-token');
    const made = await fetch(`${server.url}/api/snoozes`, { method: 'POST', headers: { ...headers, 'x-csrf-token': csrf }, body: JSON.stringify(snooze) });
    expect(made.status).toBe(200);
    const elsewhere = await fetch(`${server.url}/api/snoozes`, { headers: { cookie, 'x-project-id': String(otherProjectId) } });
    expect(elsewhere.status).toBe(404);
    const signOut = await fetch(`${server.url}/sign-out`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: '_csrf=wrong',
      redirect: 'manual',
    });
    expect(signOut.status).toBe(403);
    expect((await fetch(`${server.url}/`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
  });

  it('when a person signs out, then the session ends and the dashboard sends them to sign in', async () => {
    const page = await signedInPage();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
  });
});
