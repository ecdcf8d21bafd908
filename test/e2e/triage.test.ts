import { type Browser, chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { runNumber, waitForRollups } from '../helpers/runs.ts';
import { seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// The pages a team lead triages from, in real Chromium, on a project filled through the API: two
// runs a day for six days of a suite with a steady test, a flaky one the quarantine policy takes,
// a rarely flaky one a person quarantines, and a broken one.
let server: TestServer;
let browser: Browser;
let projectId: number;
let api: ReturnType<typeof client>;
let admin: { userId: string; name: string };
let viewerId: string;
const clock = new TestClock(new Date('2026-11-01T06:00:00Z'));
const HOUR = 3_600_000;

const [steady, flaky, rarelyFlaky, broken, nightlyOnly] = [1, 2, 3, 4, 5].map((n) => testId(n)) as [string, string, string, string, string];
const TITLES: Record<string, { title: string; file_path: string; tags?: string[] }> = {
  [steady]: { title: 'shows the catalogue', file_path: 'catalogue.spec.ts' },
  [flaky]: { title: 'pays by card', file_path: 'checkout.spec.ts', tags: ['@payments'] },
  [rarelyFlaky]: { title: 'applies a coupon', file_path: 'checkout.spec.ts' },
  [broken]: { title: 'exports the invoice', file_path: 'invoice.spec.ts' },
  [nightlyOnly]: { title: 'survives the night', file_path: 'nightly.spec.ts' },
};
const flakyRuns: number[] = [];

/** A run of `environment` with each test's final outcome, reported as the reporter does, rolled up. */
async function reportRun(environment: string, commit: string, outcomes: Record<string, FinalOutcome>): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment, commit })).body.data.test_run.id as number;
  const ids = Object.keys(outcomes);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id, TITLES[id])), complete: true });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: ids.flatMap((id) => attemptsOf(id, outcomes[id] as FinalOutcome)) });
  const failed = Object.values(outcomes).includes('unexpected');
  expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failed ? 'failed' : 'passed' })).status).toBe(200);
  await waitForRollups(server.sql);
  return runId;
}

beforeAll(async () => {
  server = await startTestServer({ clock });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  api = client(server.url, project.key);
  await api.post('/api/environments', { name: 'CI', slug: 'ci' });
  await api.post('/api/environments', { name: 'Nightly', slug: 'nightly' });
  expect((await api.put('/api/quarantine-policy', { mode: 'auto', threshold: 0.3, cap_percent: 50 })).status).toBe(200);
  const person = await seedUser(server.sql, [projectId]);
  const [row] = await server.sql<{ name: string }[]>`select name from users where id = ${person.userId}`;
  admin = { userId: person.userId, name: row?.name ?? '' };
  viewerId = (await seedUser(server.sql, [projectId], { role: 'viewer' })).userId;
  for (let run = 1; run <= 12; run++) {
    clock.advance(12 * HOUR);
    const runId = await reportRun('ci', `c${run}`, {
      [steady]: 'expected',
      [flaky]: run % 3 === 1 ? 'flaky' : 'expected',
      [rarelyFlaky]: run === 2 ? 'flaky' : 'expected',
      [broken]: 'unexpected',
    });
    if (run % 3 === 1) flakyRuns.push(runId);
  }
  await reportRun('nightly', 'n1', { [nightlyOnly]: 'flaky' });
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signedInPage(userId = admin.userId): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, clock.now)}`);
  return page;
}

/** The flaky tests page's rows as a person reads them: the test's title and each column's text. */
async function listedRows(page: Page): Promise<{ test: string; environment: string; class: string; score: string; flaky: string; quarantine: string }[]> {
  return page.locator('table.flaky tbody tr').evaluateAll((rows) =>
    rows.map((row) => {
      const cells = [...row.querySelectorAll('td')].map((cell) => (cell as HTMLElement).innerText.replace(/\s+/g, ' ').trim());
      return {
        test: (row.querySelector('td a') as HTMLElement).innerText,
        environment: cells[1] ?? '',
        class: cells[2] ?? '',
        score: cells[3] ?? '',
        flaky: cells[4] ?? '',
        quarantine: cells[7] ?? '',
      };
    }),
  );
}

describe('the flaky tests page', () => {
  it('when a team lead opens it from the navigation, then the flaky and broken tests are ranked with their score, runs, trend and quarantine', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Flaky tests' }).click();
    expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}/flaky-tests`);
    const rows = await listedRows(page);
    expect(rows.map((row) => [row.test, row.environment, row.class, row.score, row.flaky])).toEqual([
      // One run, flaky in it: listed before its class is known, with the runs it still needs.
      ['survives the night', 'Nightly', 'too few runs 9 more runs for a class', '100%', '1 of 1'],
      ['pays by card', 'CI', 'flaky', '33%', '4 of 12'],
      ['applies a coupon', 'CI', 'flaky', '8%', '1 of 12'],
      ['exports the invoice', 'CI', 'broken', '0%', '0 of 12 failed in 12 of 12'],
    ]);
    // Quarantined by the policy once it had its ten runs (4 flaky of 10, at threshold 0.3).
    expect(rows[1]?.quarantine).toMatch(
      /^Quarantined until 2026-11-20 by the quarantine policy \(auto\): Quarantined by the quarantine policy: flaky in 4 of 10 runs/,
    );
    expect(rows[2]?.quarantine).toContain('Quarantine');
    const cardRow = page.locator(`tr[data-test="${flaky}"]`);
    expect(await cardRow.getByRole('link', { name: `#${await runNumber(server.sql, flakyRuns.at(-1) as number)}` }).count()).toBe(1);
    // Runs on 1 to 7 November, flaky on the 1st, 2nd, 4th and 5th.
    // The chart is named as a whole; each of its points is a link of its own.
    expect(await cardRow.locator('[aria-label^="Flaky on"]').first().getAttribute('aria-label')).toBe('Flaky on 4 of the 7 days with runs in the last 14 days');
    const events = await page.locator('table.events tbody tr').allInnerTexts();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(/pays by card\s+CI\s+quarantined\s+flaky in 4 of 10 runs over the last 14 days \(score 0\.40, threshold 0\.3\)/);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('when the list is filtered by class, environment and search, then only those tests are listed', async () => {
    const page = await signedInPage();
    const listed = async (query: string) => {
      await page.goto(`${server.url}/projects/${projectId}/flaky-tests?${query}`);
      return (await listedRows(page)).map((row) => `${row.test} (${row.environment})`);
    };
    expect(await listed('class=broken')).toEqual(['exports the invoice (CI)']);
    expect(await listed('class=all&search=CHECKOUT')).toEqual(['pays by card (CI)', 'applies a coupon (CI)']);
    const nightly = (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'nightly').id as number;
    expect(await listed(`class=all&environment_id=${nightly}`)).toEqual(['survives the night (Nightly)']);
    expect(await listed('class=healthy')).toEqual(['shows the catalogue (CI)']);
    // The same search through the API.
    const byApi = (await api.get('/api/flaky-tests?search=coupon')).body.data.tests.map((test: { test_case_id: string }) => test.test_case_id);
    expect(byApi).toEqual([rarelyFlaky]);
  });

  it('when a person quarantines a test from the page, then it is snoozed in its environment by them, and releasing it ends the snooze', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/flaky-tests`);
    const row = page.locator(`tr[data-test="${rarelyFlaky}"]`);
    await row.getByText('Quarantine', { exact: true }).click();
    await row.getByRole('button', { name: 'Quarantine this test' }).click();
    await expect.poll(() => row.locator('td').nth(7).innerText(), { timeout: 10_000 }).toContain('Snoozed until');
    expect((await row.locator('td').nth(7).innerText()).replace(/\s+/g, ' ')).toContain(`by ${admin.name} (user): Quarantined from the flaky tests page`);
    const ci = (await api.get('/api/environments')).body.data.environments.find((env: { slug: string }) => env.slug === 'ci').id as number;
    const [snooze] = (await api.get('/api/snoozes')).body.data.snoozes.filter((s: { test_ids: string[] }) => s.test_ids.includes(rarelyFlaky));
    expect(snooze).toMatchObject({ test_ids: [rarelyFlaky], source: 'user', created_by: admin.userId, scoped_to_environment_id: ci });

    await row.getByRole('button', { name: 'Release' }).click();
    const active = async () => (await api.get('/api/snoozes?status=active')).body.data.snoozes.map((s: { id: number }) => s.id);
    await expect.poll(active).not.toContain(snooze.id);
    await expect.poll(() => row.getByText('Quarantine', { exact: true }).count()).toBe(1);
  });

  it('when a viewer opens it, then nothing is offered to quarantine or release', async () => {
    const page = await signedInPage(viewerId);
    await page.goto(`${server.url}/projects/${projectId}/flaky-tests`);
    expect(await listedRows(page)).toHaveLength(4);
    expect(await page.getByRole('button', { name: /Quarantine|Release/ }).count()).toBe(0);
  });
});

describe('the flaky tests page of a new team', () => {
  it('when a team has two runs, then the tests flaky or failed in them are listed with the runs their class still needs, and an empty list says why', async () => {
    const team = await seedProject(server.sql, 'Newcomers');
    const teamApi = client(server.url, team.key);
    const lead = await seedUser(server.sql, [team.projectId]);
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, lead.userId, clock.now)}`);
    const url = (query = '') => `${server.url}/projects/${team.projectId}/flaky-tests${query}`;
    const emptyText = async () => (await page.locator('p.empty').innerText()).replace(/\s+/g, ' ');

    // Before any run: the page says what makes a run count, and when tests appear.
    await page.goto(url());
    expect(await emptyText()).toMatch(/^No run of this project has been counted in the last 14 days yet\. A run counts once it ends passed or failed/);
    expect(await emptyText()).toContain('A test gets a class after 10 counted runs; before that it is listed here as soon as it fails or passes on a retry.');

    expect((await teamApi.post('/api/environments', { name: 'CI', slug: 'ci' })).status).toBe(201);
    const [retried, failing, passing] = [11, 12, 13].map((n) => testId(n)) as [string, string, string];
    TITLES[retried] = { title: 'logs in after a retry', file_path: 'login.spec.ts' };
    TITLES[failing] = { title: 'sends the receipt', file_path: 'receipt.spec.ts' };
    TITLES[passing] = { title: 'lists the products', file_path: 'catalogue.spec.ts' };
    for (const commit of ['t1', 't2']) {
      clock.advance(HOUR);
      const runId = (await teamApi.post('/api/test-runs/report', { environment: 'ci', commit })).body.data.test_run.id as number;
      await teamApi.post(`/api/test-runs/${runId}/shards/1/begin`, {
        tests: [retried, failing, passing].map((id) => listedTest(id, TITLES[id])),
        complete: true,
      });
      const outcomes: [string, FinalOutcome][] = [
        [retried, 'flaky'],
        [failing, 'unexpected'],
        [passing, 'expected'],
      ];
      await teamApi.post(`/api/test-runs/${runId}/results`, { shard: 1, results: outcomes.flatMap(([id, outcome]) => attemptsOf(id, outcome)) });
      expect((await teamApi.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' })).status).toBe(200);
      await waitForRollups(server.sql);
    }

    await page.goto(url());
    const rows = await listedRows(page);
    expect(rows.map((row) => [row.test, row.class, row.flaky])).toEqual([
      ['logs in after a retry', 'too few runs 8 more runs for a class', '2 of 2'],
      ['sends the receipt', 'too few runs 8 more runs for a class', '0 of 2 failed in 2 of 2'],
    ]);
    expect(await seriousViolations(page)).toEqual([]);
    // The API tells the same, on request.
    const early = (await teamApi.get('/api/flaky-tests?class=unknown')).body.data.tests as { test_case_id: string; runs_needed: number; failed_runs: number }[];
    expect(early.map((test) => [test.test_case_id, test.runs_needed])).toEqual(
      expect.arrayContaining([
        [retried, 8],
        [failing, 8],
        [passing, 8],
      ]),
    );
    const listed = (await teamApi.get('/api/flaky-tests?class=flaky&early=true')).body.data.tests.map((test: { test_case_id: string }) => test.test_case_id);
    expect(listed.sort()).toEqual([retried, failing].sort());

    // Asked for a class no test has yet, the page says why.
    await page.goto(url('?class=flaky'));
    expect(await emptyText()).toBe(
      'No test is in the class "flaky" in the last 14 days (3 tests counted). Tests get a class after 10 counted runs (the most any has is 2); meanwhile the ones that fail or pass on a retry are listed under "flaky or broken, and early failures".',
    );
  });
});

describe('snoozing by finding tests', () => {
  it('when a person finds tests by file and by tag on the snoozes page and picks them, then one snooze names them, shown as made by them', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/snoozes`);
    await page.getByLabel('Find tests (title, file or @tag)').fill('@payments');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(/find=%40payments/);
    expect(await page.locator('fieldset.picked li').allInnerTexts()).toEqual([expect.stringContaining('pays by card')]);
    await page.getByLabel('Find tests (title, file or @tag)').fill('checkout');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(/find=checkout/);
    const found = page.locator('fieldset.picked');
    expect(await found.locator('li').allInnerTexts()).toEqual([expect.stringMatching(/^applies a coupon/), expect.stringMatching(/^pays by card/)]);
    await found.getByLabel(/applies a coupon/).check();
    await found.getByLabel(/pays by card/).check();
    await page.getByLabel('Until').fill('2026-12-01');
    await page.getByLabel('Reason').fill('checkout is being rebuilt');
    await page.getByRole('button', { name: 'Snooze', exact: true }).click();
    const row = page.locator('tr', { hasText: 'checkout is being rebuilt' });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.locator('td').nth(3).innerText()).toBe(admin.name);
    const [made] = (await api.get('/api/snoozes')).body.data.snoozes.filter((s: { description: string }) => s.description === 'checkout is being rebuilt');
    await api.delete(`/api/snoozes/${made.id}`);
    expect({ ...made, test_ids: [...made.test_ids].sort() }).toMatchObject({
      test_ids: [flaky, rarelyFlaky].sort(),
      created_by: admin.userId,
      source: 'user',
      scoped_to_environment_id: null,
    });
    expect(await seriousViolations(page)).toEqual([]);
  });
});

describe('the quarantine policy in Settings', () => {
  it('when an admin changes the policy from Settings, then the API answers the new policy', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/settings`);
    await page.getByLabel('Mode').selectOption('suggest');
    await page.getByLabel('Threshold (score, 0 to 1)').fill('0.05');
    await page.getByLabel('Released after clean runs').fill('5');
    await page.getByRole('button', { name: 'Save quarantine policy' }).click();
    await expect
      .poll(async () => (await api.get('/api/quarantine-policy')).body.data.policy)
      .toEqual({
        mode: 'suggest',
        threshold: 0.05,
        cap_percent: 50,
        expiry_days: 14,
        release_after_clean_runs: 5,
      });
    await expect.poll(() => page.getByText(/^Now: /).innerText()).toContain('Now: suggest, threshold 0.05');
    await page.waitForLoadState('load');
    expect(await seriousViolations(page)).toEqual([]);
    // In suggest mode the page says what the policy would quarantine.
    await page.goto(`${server.url}/projects/${projectId}/flaky-tests`);
    expect(await page.locator(`tr[data-test="${rarelyFlaky}"]`).innerText()).toContain('The policy would quarantine it (score at least 0.05)');
  });

  it('when a viewer opens Settings, then the policy is shown and not offered to change', async () => {
    const page = await signedInPage(viewerId);
    await page.goto(`${server.url}/projects/${projectId}/settings`);
    expect(await page.getByText(/^Now: /).innerText()).toMatch(/^Now: (off|suggest|auto), threshold/);
    expect(await page.getByRole('button', { name: 'Save quarantine policy' }).count()).toBe(0);
  });
});

describe('what changed between two runs', () => {
  it("when a run breaks a test that passed in the branch's previous run, then its page says new and still failing, and compares the two runs", async () => {
    await server.sql`update projects set repo_url = 'https://github.com/acme/shop' where id = ${projectId}`;
    const before = await reportRun('nightly', 'd1'.repeat(20), {
      [steady]: 'expected',
      [rarelyFlaky]: 'expected',
      [broken]: 'unexpected',
      [nightlyOnly]: 'expected',
    });
    const after = await reportRun('nightly', 'd2'.repeat(20), { [steady]: 'expected', [rarelyFlaky]: 'unexpected', [broken]: 'unexpected', [flaky]: 'flaky' });
    // Pages name runs by their numbers in the project; URLs keep the ids.
    const [beforeNo, afterNo] = [await runNumber(server.sql, before), await runNumber(server.sql, after)];
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${after}`);
    const tagsOf = async (test: string) => (await page.locator(`tr[data-test="${test}"] td`).first().innerText()).replace(/\s+/g, ' ').trim();
    expect(await tagsOf(rarelyFlaky)).toBe('failed new');
    expect(await tagsOf(broken)).toBe('failed still failing');

    await page.getByRole('link', { name: `Compare with run #${beforeNo}` }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/runs/${after}/compare/${before}$`));
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`Run #${afterNo} compared with run #${beforeNo}`);
    const listed = async (list: string) => page.locator(`section[data-list="${list}"] tbody tr td:first-child a`).allInnerTexts();
    expect(await listed('new-failures')).toEqual(['applies a coupon']);
    expect(await listed('still-failing')).toEqual(['exports the invoice']);
    expect(await listed('added-tests')).toEqual(['pays by card']);
    expect(await listed('removed-tests')).toEqual(['survives the night']);
    expect(await listed('flaky-in-either')).toEqual(['pays by card']);
    expect(await listed('fixed')).toEqual([]);
    expect(await page.locator('section[data-list="fixed"]').innerText()).toContain('No test that failed there passes here.');
    expect(await page.locator(`section[data-list="new-failures"] tr[data-test="${rarelyFlaky}"]`).innerText()).toMatch(/passed\s+failed/);
    expect(await page.getByRole('link', { name: 'The commits between them' }).getAttribute('href')).toBe(
      `https://github.com/acme/shop/compare/${'d1'.repeat(20)}...${'d2'.repeat(20)}`,
    );
    expect(await seriousViolations(page)).toEqual([]);

    // Without the other run, the comparison is with the previous one of the environment and branch.
    await page.goto(`${server.url}/projects/${projectId}/runs/${after}/compare`);
    expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}/runs/${after}/compare/${before}`);

    // The test's page says when it broke there, against what it last passed on.
    await page.goto(`${server.url}/projects/${projectId}/tests/${rarelyFlaky}`);
    const nightly = (await page.locator('table.broke tr[data-line="Nightly"]').innerText()).replace(/\s+/g, ' ');
    expect(nightly).toContain(
      `failing since run #${afterNo} (${'d2'.repeat(6)}) on 2026-11-07, 1 failed run; last passed in run #${beforeNo} (${'d1'.repeat(6)})`,
    );
    expect(await page.getByRole('link', { name: 'what changed between them' }).getAttribute('href')).toBe(
      `https://github.com/acme/shop/compare/${'d1'.repeat(20)}...${'d2'.repeat(20)}`,
    );
    expect((await page.locator('table.broke tr[data-line="CI"]').innerText()).replace(/\s+/g, ' ')).toMatch(/^CI passing: passed in run #\d+/);
    const brokenSeen = await signedInPage();
    await brokenSeen.goto(`${server.url}/projects/${projectId}/tests/${broken}`);
    expect((await brokenSeen.locator('table.broke tr[data-line="CI"]').innerText()).replace(/\s+/g, ' ')).toMatch(
      /failing since run #\d+ \(c1\) on 2026-11-01, 12 failed runs; no pass in its history/,
    );
    expect(await seriousViolations(page)).toEqual([]);
  });
});

describe('failures by kind', () => {
  it("when a run's failures are of several kinds, then each says its kind, the API too, and the page shows one kind alone", async () => {
    const errors: Record<string, string> = {
      [steady]: "TimeoutError: locator.click: Timeout 400ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'Pay' })",
      [rarelyFlaky]: 'Error: page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:3000/',
      [broken]: "Error: expect(locator).toHaveText(expected) failed\n\nLocator: locator('#total')",
    };
    const runId = (await api.post('/api/test-runs/report', { environment: 'ci', branch: 'kinds' })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: Object.keys(errors).map((id) => listedTest(id, TITLES[id])), complete: true });
    await api.post(`/api/test-runs/${runId}/results`, {
      shard: 1,
      results: Object.entries(errors).flatMap(([id, error]) => attemptsOf(id, 'unexpected', error)),
    });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
    const details = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.flattenedSummaryDetails;
    expect(Object.fromEntries(details.map((d: { title: string; failure_category: string }) => [d.title, d.failure_category]))).toEqual({
      'shows the catalogue': 'locator',
      'applies a coupon': 'navigation',
      'exports the invoice': 'assertion',
    });
    const page = await signedInPage();
    await page.goto(`${server.url}/projects/${projectId}/runs/${runId}`);
    expect(await page.locator(`tr[data-test="${steady}"] .tag.kind`).innerText()).toBe('locator');
    const kinds = page.getByRole('navigation', { name: 'Failures by kind' });
    expect((await kinds.innerText()).replace(/\s+/g, ' ')).toBe('Failures by kind: every kind · assertion (1) · locator (1) · navigation (1)');
    await kinds.getByRole('link', { name: 'navigation (1)' }).click();
    await page.waitForURL(/category=navigation/);
    expect(await page.locator('tr.failed strong').allInnerTexts()).toEqual(['applies a coupon']);
    expect(await seriousViolations(page)).toEqual([]);
  });
});

describe("a phone's width", () => {
  it('when each page is opened 390 px wide, then none scrolls sideways: what is wider scrolls within itself', async () => {
    const [runId] = flakyRuns;
    // A failure whose error is one long line, as a URL can be.
    const longError = `Error: page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:3000/${'checkout-step-'.repeat(30)}`;
    const failed = (await api.post('/api/test-runs/report', { environment: 'ci', branch: 'a-branch-with-a-long-name/'.repeat(4) })).body.data.test_run
      .id as number;
    await api.post(`/api/test-runs/${failed}/shards/1/begin`, { tests: [listedTest(broken, TITLES[broken])], complete: true });
    await api.post(`/api/test-runs/${failed}/results`, { shard: 1, results: attemptsOf(broken, 'unexpected', longError) });
    await api.post(`/api/test-runs/${failed}/shards/1/end`, { status: 'failed' });
    const signedLink = new URL((await api.get(`/api/test-runs/${failed}`)).body.data.test_run.testRun.summary_url);
    const pages = [
      `/projects/${projectId}/runs/${failed}`,
      `${signedLink.pathname}${signedLink.search}`,
      '/',
      `/projects/${projectId}/runs`,
      `/projects/${projectId}/runs/${runId}`,
      `/projects/${projectId}/runs/${(runId as number) + 1}/compare/${runId}`,
      `/projects/${projectId}/tests`,
      `/projects/${projectId}/tests/${flaky}`,
      `/projects/${projectId}/flaky-tests`,
      `/projects/${projectId}/failure-groups`,
      `/projects/${projectId}/snoozes?find=checkout`,
      `/projects/${projectId}/environments`,
      `/projects/${projectId}/analytics`,
      `/projects/${projectId}/members`,
      `/projects/${projectId}/keys`,
      `/projects/${projectId}/audit`,
      `/projects/${projectId}/settings`,
      `/projects/${projectId}/nowhere`,
    ];
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, admin.userId, clock.now)}`);
    const wide: string[] = [];
    for (const path of pages) {
      await page.goto(`${server.url}${path}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width > 390) wide.push(`${path}: ${width} px`);
    }
    expect(wide).toEqual([]);
    await context.close();
  });
});
