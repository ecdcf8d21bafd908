import path from 'node:path';
import { type Browser, chromium, type Page, expect as see } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireAttempt } from '../../reporter/src/api/wire.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { layoutProblems } from '../helpers/layout.ts';
import { CHROMIUM_LAUNCH_OPTIONS, ROOT } from '../helpers/playwright.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, testId, type TestServer } from '../helpers/server.ts';

// The dashboard's trends and a run's timeline in real Chromium, over runs recorded through the
// reporting API on three days: a point shows its value and run on hover and on keyboard focus, is a
// link to its run, and a chart zooms to a range (From/To, a drag) and back; the last run's two
// shards of two workers each are drawn as lanes of their tests in order, the shard that ended last
// and the idle workers marked; axe finds nothing serious and a phone does not scroll sideways.
let server: TestServer;
let browser: Browser;
let storage: string;
let projectId: number;
const runs: { id: number; number: number }[] = [];
const [t1, t2, t3, t4, t5, t6] = [1, 2, 3, 4, 5, 6].map(testId) as [string, string, string, string, string, string];
const TITLES: Record<string, string> = {
  [t1]: 'shows the home page',
  [t2]: 'pays by card',
  [t3]: 'lists prices',
  [t4]: 'searches the catalogue',
  [t5]: 'exports the order history',
  [t6]: 'imports a price list',
};
const GROUP = 'card-declined';
/** Screenshots of the pages checked on a phone and a laptop (the CI keeps test-results/). */
const SCREENS = path.join(ROOT, 'test-results', 'dashboard-charts');

/** An attempt that started `at` ms after `base` on `worker`, lasting `ms`. */
function ran(id: string, base: Date, at: number, ms: number, worker: number, fields: Parameters<typeof attempt>[1] = {}): WireAttempt {
  return attempt(id, { started_at: new Date(base.getTime() + at).toISOString(), duration: ms, parallel_index: worker, ...fields });
}

async function recordRun(api: ReturnType<typeof client>, day: string, shards: WireAttempt[][]): Promise<void> {
  const base = new Date(`${day}T12:00:00Z`);
  server.clock.now = base;
  const { id, number } = (await api.post('/api/test-runs/report', { environment: 'staging', total_shards: shards.length })).body.data.test_run;
  runs.push({ id, number });
  for (const [i, results] of shards.entries()) {
    const begin = await api.post(`/api/test-runs/${id}/shards/${i + 1}/begin`, {
      tests: [...new Set(results.map((r) => r.test_id))].map((test) => listedTest(test, { title: TITLES[test] })),
      started_at: base.toISOString(),
    });
    expect(begin.body, server.logs.join('').slice(-3000)).toMatchObject({ data: { accepts_attempt_fields: ['parallel_index'] } });
  }
  server.clock.now = new Date(base.getTime() + 60_000);
  for (const [i, results] of shards.entries()) {
    expect((await api.post(`/api/test-runs/${id}/results`, { shard: i + 1, results })).status).toBe(200);
    // As the reporter does: each failure in a group is attached to it.
    for (const result of results.filter((r) => r.final?.failure_group_id)) {
      const attached = await api.post(`/api/failure-groups/${result.final?.failure_group_id}/members`, { test_run_id: id, test_case_id: result.test_id });
      expect(attached.status).toBe(200);
    }
    const failed = results.some((r) => r.final?.outcome === 'unexpected');
    expect((await api.post(`/api/test-runs/${id}/shards/${i + 1}/end`, { status: failed ? 'failed' : 'passed' })).status).toBe(200);
  }
  await waitForRollups(server.sql);
}

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock(new Date('2026-05-08T12:00:00Z')) });
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'staging');
  const user = await seedUser(server.sql, [projectId]);
  const api = client(server.url, project.key);
  const fail = { final: 'unexpected' as const, failureGroupId: GROUP, error_message: 'Error: card declined' };
  const flaky = [attempt(t3, { final: null, status: 'failed', duration: 50 }), attempt(t3, { retry: 1, final: 'flaky', status: 'passed', duration: 50 })];
  await recordRun(api, '2026-05-08', [[attempt(t1, { duration: 100 }), attempt(t2, { ...fail, duration: 300 }), ...flaky]]);
  await recordRun(api, '2026-05-09', [[attempt(t1, { duration: 120 }), attempt(t2, { ...fail, duration: 250 }), attempt(t3, { duration: 60 })]]);
  // Two shards of two workers: shard 2 ends last (9 s), shard 1's workers sit idle most of the run.
  const base = new Date('2026-05-10T12:00:00Z');
  await recordRun(api, '2026-05-10', [
    [ran(t1, base, 0, 1000, 0), ran(t2, base, 1000, 2000, 0, fail), ran(t3, base, 0, 500, 1)],
    [ran(t4, base, 0, 4000, 0), ran(t5, base, 4000, 5000, 0), ran(t6, base, 0, 8000, 1)],
  ]);
  server.clock.now = new Date('2026-05-10T18:00:00Z');
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  const context = await browser.newContext();
  const token = await createLoginLink(server.sql, user.userId, server.clock.now);
  await (await context.newPage()).goto(`${server.url}/sign-in/link?token=${token}`);
  storage = JSON.stringify(await context.storageState());
  await context.close();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function open(path: string, width = 1280, javaScript = true, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, storageState: JSON.parse(storage), javaScriptEnabled: javaScript, colorScheme });
  const page = await context.newPage();
  await page.goto(`${server.url}/projects/${projectId}${path}`);
  return page;
}

const runPath = (run: { id: number } | undefined) => `/projects/${projectId}/runs/${run?.id}`;
const tip = (page: Page) => page.locator('.chart-tip:visible');

describe('a trend', () => {
  it('when a point is hovered or focused, then its value and its run are shown, and the arrow keys move along the points', async () => {
    const page = await open('/analytics?days=7');
    const chart = page.locator('figure.trend').first();
    const last = runs[2] as { id: number; number: number };
    const point = chart.locator(`a.point[href="${runPath(last)}"]`);
    await point.hover();
    await see(tip(page)).toBeVisible();
    await see(tip(page)).toHaveText(/^2026-05-10: 1 run \(0 passed, 1 failed, 0 other\), \d+\.\d% of tests passed; last run #\d+$/);
    expect(await tip(page).textContent()).toContain(`last run #${last.number}`);
    await page.mouse.move(0, 0);
    await see(page.locator('.chart-tip')).toHaveCount(await page.locator('.chart-tip[hidden]').count());
    // One tab stop a chart: the newest point; the arrow keys move from there.
    await page.getByRole('link', { name: "This week's digest" }).focus();
    await page.keyboard.press('Tab');
    await see(chart.locator('.point').last()).toBeFocused();
    await see(tip(page)).toHaveText(/^2026-05-1\d: /);
    await chart.locator('.point[tabindex="0"]').focus();
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await see(tip(page)).toHaveText(new RegExp(`^2026-05-08: 1 run .*; last run #${runs[0]?.number}$`));
    await see(page.locator(':focus')).toHaveAttribute('aria-label', (await tip(page).textContent()) ?? '');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}${runPath(runs[0])}`);
    await page.context().close();
  });

  it("when a point of a test's durations is clicked, then its run opens", async () => {
    const page = await open(`/tests/${t2}`);
    const chart = page.locator('figure.trend');
    await see(chart.locator('a.point')).toHaveCount(3);
    const second = chart.locator('a.point').nth(1);
    await second.hover();
    await see(tip(page)).toHaveText(`run #${runs[1]?.number} on 2026-05-09: failed, 250 ms`);
    await second.click();
    await page.waitForURL(`${server.url}${runPath(runs[1])}`);
    await page.context().close();
  });

  it('when a range is chosen or dragged across, then the chart shows those points alone, and Reset shows them all', async () => {
    const page = await open('/analytics?days=14');
    const chart = page.locator('figure.trend').first();
    await see(chart.locator('.point')).toHaveCount(14);
    await chart.getByRole('combobox', { name: 'Zoom from' }).selectOption('2026-05-08');
    await chart.getByRole('combobox', { name: 'Zoom to' }).selectOption('2026-05-10');
    await see(chart.locator('.point')).toHaveCount(3);
    await see(chart.locator('svg')).toHaveAttribute('aria-label', /from 2026-05-08 to 2026-05-10$/);
    await chart.getByRole('button', { name: 'Reset zoom' }).click();
    await see(chart.locator('.point')).toHaveCount(14);
    // A drag from the fourth point to the seventh: four points, and no run opened.
    const box = async (i: number) => (await chart.locator('.point rect.hit').nth(i).boundingBox()) as { x: number; y: number; width: number; height: number };
    const [from, to] = [await box(3), await box(6)];
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 8 });
    await page.mouse.up();
    await see(chart.locator('.point')).toHaveCount(4);
    expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}/analytics`);
    await page.context().close();
  });

  it("when the flaky tests and a failure group's pages are opened, then their trends' points link to runs and show them on focus", async () => {
    const flaky = await open('/flaky-tests');
    const row = flaky.locator(`tr[data-test="${t3}"]`);
    const day = row.locator(`a.point[href="${runPath(runs[0])}"]`);
    await day.focus();
    await see(tip(flaky)).toHaveText(`2026-05-08: flaky in 1 of 1 runs; last run #${runs[0]?.number}`);
    await flaky.context().close();
    const group = await open(`/failure-groups/${GROUP}`);
    const points = group.locator('figure.trend a.point');
    await see(points).toHaveCount(3);
    await points.last().focus();
    await see(tip(group)).toHaveText(new RegExp(`^run #${runs[2]?.number} on 2026-05-10 \\d\\d:\\d\\d: 1 test failed with it$`));
    await group.context().close();
  });

  it('when the script is off, then each point is still a link to its run, named by its value', async () => {
    const page = await open(`/tests/${t2}`, 1280, false);
    const links = page.locator('figure.trend a.point');
    await see(links).toHaveCount(3);
    await see(links.first()).toHaveAttribute('aria-label', `run #${runs[0]?.number} on 2026-05-08: failed, 300 ms`);
    await see(links.first()).toHaveAttribute('href', runPath(runs[0]));
    await page.context().close();
  });
});

describe("a run's timeline", () => {
  it("when the run page is opened, then each shard's workers are lanes of their tests in order, the last shard and idle workers marked", async () => {
    const page = await open(`/runs/${runs[2]?.id}`);
    const lanes = page.locator('section.timeline li.lane');
    await see(lanes.locator('.lane-name strong')).toHaveText(['shard 1 · worker 0', 'shard 1 · worker 1', 'shard 2 · worker 0', 'shard 2 · worker 1']);
    await see(lanes.nth(0).locator('svg.track rect:not(.tl-idle)')).toHaveCount(2);
    await see(lanes.nth(0).locator('svg.track rect title')).toHaveText([
      'shows the home page: passed, from +0:00 for 1.0 s',
      'pays by card: failed, from +0:01 for 2.0 s',
    ]);
    await see(lanes.nth(0).locator('svg.track rect.tl-failed')).toHaveCount(1);
    await see(lanes.nth(2).locator('.tl-mark')).toHaveText(['ended last']);
    await see(lanes.nth(0).locator('.tl-mark')).toHaveText(['idle']);
    await see(lanes.nth(1).locator('.tl-mark')).toHaveText(['idle']);
    await see(lanes.nth(3).locator('.tl-mark')).toHaveCount(0);
    await see(page.locator('.timeline-summary')).toHaveText(
      '6 attempts on 4 lanes in 2 shards, over 9.0 s. Last to end: shard 2, 6.0 s after the first shard to end. Idlest: shard 1 · worker 1, busy 6% of the run.',
    );
    // The same, as a table: lane by lane, in the order each worker ran them.
    await page.getByText('The timeline as a table').click();
    const rows = page.locator('details.timeline-table tbody tr');
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells, (cell) => cell.textContent?.trim())));
    expect(cells.map((row) => [row[0], row[2], row[3]])).toEqual([
      ['shard 1 · worker 0', 'shows the home page', '+0:00'],
      ['shard 1 · worker 0', 'pays by card', '+0:01'],
      ['shard 1 · worker 1', 'lists prices', '+0:00'],
      ['shard 2 · worker 0', 'searches the catalogue', '+0:00'],
      ['shard 2 · worker 0', 'exports the order history', '+0:04'],
      ['shard 2 · worker 1', 'imports a price list', '+0:00'],
    ]);
    await page.context().close();
  });
});

describe('on a phone and a laptop', () => {
  const PAGES = () => ['/analytics', `/tests/${t2}`, '/flaky-tests', `/failure-groups/${GROUP}`, `/runs/${runs[2]?.id}`];
  for (const width of [390, 1280]) {
    it(`when the pages with charts and the timeline are opened ${width} px wide, then none scrolls sideways and axe finds nothing serious`, async () => {
      for (const page_ of PAGES()) {
        for (const theme of ['light', 'dark'] as const) {
          const page = await open(page_, width, true, theme);
          const where = `${page_} at ${width} px, ${theme}`;
          // The table of the timeline open, and a chart's tip shown: what a reader meets.
          const table = page.locator('details.timeline-table summary');
          if ((await table.count()) > 0) await table.click();
          const point = page.locator('figure.trend .point[tabindex="0"]').first();
          if ((await point.count()) > 0) await point.focus();
          await page.screenshot({ path: path.join(SCREENS, `${page_.split('/')[1]}-${width}-${theme}.png`), fullPage: true });
          expect((await layoutProblems(page, 0)).overflow, where).toBeNull();
          expect(await seriousViolations(page), where).toEqual([]);
          await page.context().close();
        }
      }
    }, 150_000);
  }
});
