import fs from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { layoutProblems, navigationLines } from '../helpers/layout.ts';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from '../helpers/playwright.ts';
import { runReportedSuite } from '../helpers/reports.ts';
import { waitForRollups, waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// Every page of the dashboard in real Chromium, on a laptop (1280 px) and a phone (390 px), in the
// light and the dark theme, over a project with two real runs of a suite (failures with their
// errors, screenshots and traces, a flaky test, a skipped one): no page scrolls sideways, no table
// column is narrower than 200 px on the phone, no word that fits its line is broken, the stylesheet
// and script load under the page's policy, and axe-core finds no serious or critical violation.
// Screenshots go to test-results/dashboard-screens/ (the CI keeps test-results/).
const SCREENS = path.join(ROOT, 'test-results', 'dashboard-screens');
const WIDTHS = [1280, 390] as const;
const MIN_COLUMN = 200;

const SUITE = `
import { test, expect } from '@playwright/test';

test.describe('checkout', () => {
  test('pays by card and sees the order confirmation with its number and delivery date', async ({ page }) => {
    await page.setContent('<h1 id="title">Payment declined</h1><p>Your card was declined by the issuing bank.</p>');
    await expect(page.locator('#title')).toHaveText('Order confirmed', { timeout: 200 });
  });
  test('applies a discount code', async ({ page }, testInfo) => {
    await page.setContent(\`<p id="total">\${testInfo.retry === 0 ? '100' : '90'}</p>\`);
    await expect(page.locator('#total')).toHaveText('90', { timeout: 200 });
  });
  test('lists the basket', async ({ page }) => {
    await page.setContent('<ul><li>socks</li></ul>');
    await expect(page.locator('li')).toHaveCount(1);
  });
  test('ships abroad', async () => {
    test.skip(true, 'abroad shipping is switched off in the staging environment');
  });
});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  retries: 1,
  projects: [{ name: 'desktop-chromium' }],
  use: { screenshot: 'only-on-failure', trace: 'retain-on-failure', launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
});
`;

let server: TestServer;
let browser: Browser;
let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
let dir: string;
const pages: Record<string, string> = {};

async function reportedRun(api: ReturnType<typeof client>, key: string): Promise<number> {
  const before = new Set<number>((await api.get('/api/test-runs?environment=staging')).body.data.test_runs.map((run: { id: number }) => run.id));
  const { output } = await runReportedSuite({
    cli: path.join(ROOT, 'node_modules/@playwright/test/cli.js'),
    cwd: dir,
    reporter: REPORTER,
    reportFile: path.join(dir, 'report.json'),
    args: [`--output=${path.join(dir, 'results')}`],
    env: { ...process.env, ...reporterEnv(server.url, key, 'staging') },
  });
  const run = (await api.get('/api/test-runs?environment=staging')).body.data.test_runs.find((r: { id: number }) => !before.has(r.id));
  if (!run) throw new Error(`the suite reported no run:\n${output}`);
  await waitForRun(api, run.id);
  return run.id as number;
}

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  const project = await seedProject(server.sql, 'Shop');
  const id = project.projectId;
  await seedEnvironment(server.sql, id, 'staging');
  const user = await seedUser(server.sql, [id]);
  const api = client(server.url, project.key);
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'screens-suite-'));
  fs.writeFileSync(path.join(dir, 'playwright.config.ts'), CONFIG);
  fs.writeFileSync(path.join(dir, 'checkout.spec.ts'), SUITE);
  const first = await reportedRun(api, project.key);
  const second = await reportedRun(api, project.key);
  await waitForRollups(server.sql);
  const details = (await api.get(`/api/test-runs/${second}`)).body.data.test_run.flattenedSummaryDetails as {
    status: string;
    test_case_id: string;
    failure_group_id: string | null;
  }[];
  const failed = details.find((test) => test.status === 'failed');
  if (!failed?.failure_group_id) throw new Error(`run ${second} has no failure in a group: ${JSON.stringify(details)}`);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
  const snoozed = await client(server.url, user.key, { 'x-project-id': String(id) }).post('/api/snoozes', {
    test_ids: [failed.test_case_id],
    snooze_until: tomorrow,
    description: 'the payment sandbox is down until the provider fixes it',
  });
  expect(snoozed.status).toBe(200);
  const base = `/projects/${id}`;
  Object.assign(pages, {
    projects: '/',
    runs: `${base}/runs`,
    run: `${base}/runs/${second}`,
    compare: `${base}/runs/${second}/compare/${first}`,
    'compare-choosing': `${base}/runs/${second}/compare`,
    visual: `${base}/runs/${second}/visual`,
    tests: `${base}/tests`,
    test: `${base}/tests/${encodeURIComponent(failed.test_case_id)}`,
    'flaky-tests': `${base}/flaky-tests`,
    'failure-groups': `${base}/failure-groups`,
    'failure-group': `${base}/failure-groups/${encodeURIComponent(failed.failure_group_id)}`,
    environments: `${base}/environments`,
    snoozes: `${base}/snoozes`,
    analytics: `${base}/analytics`,
    digest: `${base}/digest?period=week`,
    search: `${base}/search?q=${encodeURIComponent('pays by card')}`,
    members: `${base}/members`,
    keys: `${base}/keys`,
    audit: `${base}/audit`,
    settings: `${base}/settings`,
    'not-found': `${base}/runs/999999`,
  });
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  const context = await browser.newContext();
  const token = await createLoginLink(server.sql, user.userId, server.clock.now);
  await (await context.newPage()).goto(`${server.url}/sign-in/link?token=${token}`);
  signedIn = await context.storageState();
  await context.close();
  fs.mkdirSync(SCREENS, { recursive: true });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A page opened at `width` in `theme`, signed in unless said; with what the browser refused or failed to load. */
async function open(target: string, width: number, theme: 'light' | 'dark', signedOut = false): Promise<{ page: Page; refused: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 844 }, colorScheme: theme, ...(signedOut ? {} : { storageState: signedIn }) });
  const page = await context.newPage();
  const refused: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 404/.test(message.text())) refused.push(message.text());
  });
  page.on('requestfailed', (request) => refused.push(`${request.url()}: ${request.failure()?.errorText}`));
  await page.goto(`${server.url}${target}`);
  await page.waitForLoadState('networkidle');
  return { page, refused };
}

const PAGES = [
  'projects',
  'runs',
  'run',
  'compare',
  'compare-choosing',
  'visual',
  'tests',
  'test',
  'flaky-tests',
  'failure-groups',
  'failure-group',
  'environments',
  'snoozes',
  'analytics',
  'digest',
  'search',
  'members',
  'keys',
  'audit',
  'settings',
  'not-found',
];

describe('every page on a laptop and a phone', () => {
  for (const name of PAGES) {
    for (const width of WIDTHS) {
      it(`when the ${name} page is opened ${width} px wide, then it fits, its words and columns read, and axe finds nothing serious in either theme`, async () => {
        for (const theme of ['light', 'dark'] as const) {
          const { page, refused } = await open(pages[name] as string, width, theme);
          try {
            await page.screenshot({ path: path.join(SCREENS, `${name}-${width}-${theme}.png`), fullPage: true });
            const problems = await layoutProblems(page, width < 500 ? MIN_COLUMN : 0);
            expect(problems, `${name} at ${width} px, ${theme}`).toEqual({ overflow: null, narrowColumns: [], brokenWords: [] });
            expect(refused, `${name} at ${width} px, ${theme}`).toEqual([]);
            expect(await seriousViolations(page), `${name} at ${width} px, ${theme}`).toEqual([]);
          } finally {
            await page.context().close();
          }
        }
      }, 60_000);
    }
  }

  it('when the sign-in page is opened on a phone and a laptop, then it fits and axe finds nothing serious in either theme', async () => {
    for (const width of WIDTHS) {
      for (const theme of ['light', 'dark'] as const) {
        const { page, refused } = await open('/sign-in', width, theme, true);
        await page.screenshot({ path: path.join(SCREENS, `sign-in-${width}-${theme}.png`), fullPage: true });
        expect(await layoutProblems(page, MIN_COLUMN), `sign-in at ${width} px, ${theme}`).toEqual({ overflow: null, narrowColumns: [], brokenWords: [] });
        expect(refused, `sign-in at ${width} px, ${theme}`).toEqual([]);
        expect(await seriousViolations(page), `sign-in at ${width} px, ${theme}`).toEqual([]);
        await page.context().close();
      }
    }
  });
});

describe('the header', () => {
  it("when a project's page is opened 1280 px wide, then its navigation sits on one line and the rarer sections open under Manage", async () => {
    const { page } = await open(pages.runs as string, 1280, 'light');
    expect(await navigationLines(page)).toHaveLength(1);
    expect(await page.getByRole('link', { name: 'Members' }).isVisible()).toBe(false);
    await page.getByText('Manage', { exact: true }).click();
    await page.getByRole('link', { name: 'Members' }).click();
    await page.waitForURL(/\/members$/);
    await page.context().close();
  });

  it('when / is pressed, then the search box has the focus, and what it finds opens from the keyboard', async () => {
    const { page } = await open(pages.runs as string, 1280, 'light');
    await page.keyboard.press('/');
    const box = page.getByRole('searchbox', { name: 'Search tests, runs and failure groups' });
    expect(await box.evaluate((input) => input === document.activeElement)).toBe(true);
    await box.fill('pays by card');
    await box.press('Enter');
    await page.waitForURL(/\/search\?q=pays\+by\+card$/);
    const found = page.getByRole('region', { name: /^Tests \(/ });
    expect(await found.getByRole('link').allTextContents()).toEqual(['pays by card and sees the order confirmation with its number and delivery date']);
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/tests\/[^/]+$/);
    await page.context().close();
  });

  it('when j and k are pressed on a list, then the rows take the focus in turn, and Enter opens the one reached', async () => {
    const { page } = await open(pages.runs as string, 1280, 'light');
    const links = page.locator('main table tbody tr a');
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
    await page.keyboard.press('j');
    expect(await focused()).toBe(await links.nth(0).textContent());
    await page.keyboard.press('j');
    expect(await focused()).toBe(await links.nth(1).textContent());
    await page.keyboard.press('k');
    expect(await focused()).toBe(await links.nth(0).textContent());
    const href = await links.nth(0).getAttribute('href');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}${href}`);
    await page.context().close();
  });

  it('when ? is pressed, then the shortcuts are listed in a dialog that Escape closes; typed in a field, the keys are the field’s', async () => {
    const { page } = await open(pages.runs as string, 390, 'dark');
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    expect(await dialog.isVisible()).toBe(true);
    expect(await dialog.locator('dt').allTextContents()).toEqual(['/', 'j k', 'Enter', '?', 'Esc']);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    expect(await dialog.isVisible()).toBe(false);
    // On a phone, / unfolds the menu to reach the box; what is typed then stays in it.
    await page.keyboard.press('/');
    const box = page.getByRole('searchbox', { name: 'Search tests, runs and failure groups' });
    expect(await box.isVisible()).toBe(true);
    await page.keyboard.type('j?/k');
    expect(await box.inputValue()).toBe('j?/k');
    expect(await dialog.isVisible()).toBe(false);
    expect(await layoutProblems(page, MIN_COLUMN)).toEqual({ overflow: null, narrowColumns: [], brokenWords: [] });
    await page.context().close();
  });

  it('when a page is opened on a phone, then the navigation folds behind a Menu button that opens and closes it', async () => {
    const { page } = await open(pages.run as string, 390, 'light');
    const menu = page.getByRole('button', { name: 'Menu' });
    const runs = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' });
    expect(await runs.isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await runs.isVisible()).toBe(true);
    expect(await layoutProblems(page, MIN_COLUMN)).toEqual({ overflow: null, narrowColumns: [], brokenWords: [] });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENS, 'menu-390-light.png'), fullPage: true });
    await page.keyboard.press('Escape');
    expect(await runs.isVisible()).toBe(false);
    await page.context().close();
  });

  it("when a run's failure is read on a phone, then its card shows state, title, file, kind and group, then the error full width, then the screenshot", async () => {
    const { page } = await open(pages.run as string, 390, 'light');
    const card = page.locator('table.tests tr.failed').first();
    const top = async (selector: string) => (await card.locator(selector).first().boundingBox())?.y ?? Number.NaN;
    const order = [
      await top('.tag.failed'),
      await top('.test > strong'),
      await top('.test > .file'),
      await top('td.group'),
      await top('pre.error'),
      await top('.tries img'),
    ];
    expect(order.every((y, i) => i === 0 || y >= (order[i - 1] as number))).toBe(true);
    const error = await card.locator('pre.error').boundingBox();
    const row = await card.boundingBox();
    expect(error && row && error.width / row.width).toBeGreaterThan(0.85);
    await page.context().close();
  });
});

describe('the layout reader', () => {
  it('when a page scrolls sideways, squeezes a column and breaks a short word, then it tells each', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.setContent(`<body style="margin:0"><div style="width:600px">wide</div>
<table style="width:380px"><tr><td>a column of text</td><td style="width:300px">another</td></tr></table>
<p style="width:120px;word-break:break-all">a sentence with contentious words</p>
<p style="width:120px;overflow-wrap:anywhere">averyveryveryverylongtokenwiderthanitsline</p></body>`);
    const problems = await layoutProblems(page, MIN_COLUMN);
    expect(problems.overflow).toEqual({ scrollWidth: 600, innerWidth: 390 });
    expect(problems.narrowColumns.map((cell) => cell.text)).toEqual(['a column of text']);
    expect(problems.brokenWords.map((broken) => broken.word)).toContain('contentious');
    expect(problems.brokenWords.map((broken) => broken.word)).not.toContain('averyveryveryverylongtokenwiderthanitsline');
    await page.close();
  });
});
