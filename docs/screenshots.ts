// Screenshots of the dashboard's pages of a week's runs for docs/dashboard.md (the run and failure
// group pages are shot from the demo by `npm run pictures`): `npx tsx docs/screenshots.ts` (on
// DATABASE_URL when set). A project is filled through the API as a reporter fills it (fourteen
// runs, a flaky test, a failing one and its failure group), its runs spread over the last week,
// then each page is shot in Chromium.
import path from 'node:path';
import { chromium } from '@playwright/test';
import type { FinalOutcome } from '../reporter/src/api/wire.ts';
import { rebuildRollups } from '../server/src/analytics/rollups.ts';
import { addMember } from '../server/src/projects/store.ts';
import { createLoginLink } from '../server/src/sessions/store.ts';
import { createUser } from '../server/src/users/store.ts';
import { benchDatabase, benchProject, benchServer, testIdOf } from '../bench/lib.ts';
import { attemptsOf, listedTest } from '../test/helpers/attempts.ts';
import { client } from '../test/helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../test/helpers/playwright.ts';

const TESTS = [
  ['checkout.spec.ts', 'pays by card'],
  ['checkout.spec.ts', 'applies a discount code'],
  ['cart.spec.ts', 'adds an item to the cart'],
  ['cart.spec.ts', 'keeps the cart after a reload'],
  ['search.spec.ts', 'finds a product by name'],
  ['search.spec.ts', 'suggests as you type'],
  ['account.spec.ts', 'signs up with an email'],
  ['account.spec.ts', 'resets a password'],
] as const;

function outcomeOf(test: number, run: number): FinalOutcome {
  if (test === 1 && run % 3 === 0) return 'flaky';
  if (test === 5 && run % 4 === 1) return 'flaky';
  if (test === 0 && run >= 10) return 'unexpected';
  return 'expected';
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const server = await benchServer(db);
  const { sql } = db;
  const { projectId, key } = await benchProject(sql, 'staging');
  await sql`update projects set name = 'Storefront', repo_name = 'acme/storefront' where id = ${projectId}`;
  await sql`insert into environments (project_id, slug, name) values (${projectId}, 'production', 'production')`;
  const api = client(server.url, key);
  for (let run = 0; run < 14; run++) {
    const environment = run % 2 === 0 ? 'staging' : 'production';
    const runId = (await api.post('/api/test-runs/report', { environment, branch: 'main', commit: `c0ffee${run}` })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${runId}/shards/1/begin`, {
      tests: TESTS.map(([file, title], i) => listedTest(testIdOf(i + 1), { file_path: file, title })),
      complete: true,
    });
    const results = TESTS.flatMap((_, i) => {
      const attempts = attemptsOf(
        testIdOf(i + 1),
        outcomeOf(i, run),
        'Error: expect(locator).toHaveText(expected)\n\nExpected: "Paid"\nReceived: "Card declined"',
      );
      const final = attempts.at(-1)?.final;
      if (final && final.outcome === 'unexpected') final.failure_group_id = 'card-declined';
      return attempts.map((a) => ({ ...a, duration: 800 + ((i * 137 + run * 53) % 600) }));
    });
    await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
    // The reporter attaches each final failure to its group.
    if (outcomeOf(0, run) === 'unexpected') await api.post('/api/failure-groups/card-declined/members', { test_run_id: runId, test_case_id: testIdOf(1) });
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: results.some((r) => r.final?.outcome === 'unexpected') ? 'failed' : 'passed' });
    // Two runs a day over the last week.
    const shift = `${(13 - run) * 12} hours`;
    await sql`
      update test_runs set created_at = created_at - ${shift}::interval, run_started_at = run_started_at - ${shift}::interval,
                           run_ended_at = run_ended_at - ${shift}::interval where id = ${runId}`;
  }
  await rebuildRollups(sql, projectId);
  const userId = await createUser(sql, { email: 'ada@example.com', name: 'Ada', picture: '' });
  await addMember(sql, projectId, userId);
  const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(sql, userId, new Date())}`);
    const shots: [string, string][] = [
      ['runs', `/projects/${projectId}/runs`],
      ['tests', `/projects/${projectId}/tests?days=7`],
      ['analytics', `/projects/${projectId}/analytics?days=7`],
    ];
    for (const [name, url] of shots) {
      await page.goto(`${server.url}${url}`);
      await page.screenshot({ path: path.join(import.meta.dirname, `dashboard-${name}.png`) });
      console.log(`docs/dashboard-${name}.png`);
    }
  } finally {
    await browser.close();
    await server.close();
    await db.close();
  }
}

await main();
