import { z } from 'zod';
import { type AppDeps, DAY_MS } from '../context.ts';
import { escapeLike } from '../db.ts';
import { listEnvironments } from '../environments/index.ts';
import { dailyFlakiness, type FlakinessClass, flakinessWindowSize, getPolicy, listEvents, rankedFlakyTests, WINDOW_DAYS, windowStart } from '../flaky/index.ts';
import { lastRunsByDay } from '../analytics/index.ts';
import { compareRuns } from '../comparisons/index.ts';
import { composeDigest, DIGEST_PERIODS } from '../digests/index.ts';
import { searchProject } from '../search/index.ts';
import { shiftsInRunEnvironment } from '../durations/index.ts';
import { notFound } from '../http/errors.ts';
import { positiveId } from '../http/fields.ts';
import type { RouteContext } from '../http/route.ts';
import { getRunById, previousRun } from '../runs/index.ts';
import { activeSnoozesOfTests, type SnoozeRow } from '../snoozes/index.ts';
import { testTitles } from '../testcases/index.ts';
import { userNames } from '../users/index.ts';
import { comparePage } from './compare-page.tsx';
import { digestPage } from './digest-page.tsx';
import { searchPage } from './search-page.tsx';
import { CLASS_CHOICES, type ClassChoice, flakyTestsPage, trendKey } from './flaky-page.tsx';
import { addProjectPage, projectParams } from './page-route.ts';

/** An environment's id as a page's query gives it (0: every environment, where a page offers that). */
const environmentIdText = z.string().regex(/^\d{1,10}$/);

const TESTS_PER_PAGE = 100;
/** Tests a comparison's page lists in each of its lists. */
const COMPARED_SHOWN = 200;
const EVENTS_SHOWN = 20;

function classesOf(choice: ClassChoice): FlakinessClass | FlakinessClass[] | undefined {
  if (choice === 'all') return undefined;
  return choice === 'flaky-broken' ? ['flaky', 'broken'] : choice;
}

/** The window's days, oldest first, as `YYYY-MM-DD`. */
function daysOf(now: Date, days: number): string[] {
  const first = Date.parse(`${windowStart(now, days)}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(first + i * DAY_MS).toISOString().slice(0, 10));
}

/** Of the snoozes in force, the one that covers each test where it is listed: scoped to its environment first. */
function coveringSnoozes(rows: { environment_id: number; test_case_id: string }[], snoozes: SnoozeRow[]): Map<string, SnoozeRow> {
  const covering = new Map<string, SnoozeRow>();
  for (const row of rows) {
    const naming = snoozes.filter((snooze) => snooze.test_ids.includes(row.test_case_id));
    const found =
      naming.find((snooze) => snooze.scoped_to_environment_id === row.environment_id) ?? naming.find((snooze) => snooze.scoped_to_environment_id === null);
    if (found) covering.set(trendKey(row.environment_id, row.test_case_id), found);
  }
  return covering;
}

/** The pages a team lead triages from: the flaky tests and their quarantine, two runs compared, an environment's digest, the search. */
export function triageRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/search',
    summary: "The project's tests, runs and failure groups a text names: the header's search box",
    params: projectParams,
    query: z.object({ q: z.string().max(200).optional() }).strict(),
    render: async ({ viewer, project, query }) => {
      const q = query.q?.trim() ?? '';
      const limit = 20;
      const found = q ? await searchProject(sql, project.id, { q, limit }) : null;
      return searchPage(viewer, project, q, found, limit);
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/digest',
    summary:
      "An environment's last day or week: runs and pass rate against the period before, tests that turned broken or flaky, got slower, the flakiest, most failing and slowest",
    params: projectParams,
    query: z
      .object({
        environment_id: environmentIdText.optional(),
        period: z.enum(DIGEST_PERIODS).default('week'),
      })
      .strict(),
    render: async ({ viewer, project, query }) => {
      const { rows } = await listEnvironments(sql, project.id, 1000, 0);
      const environments = rows.map((env) => ({ id: env.id, name: env.name }));
      const chosen = query.environment_id ? environments.find((env) => env.id === Number(query.environment_id)) : environments[0];
      if (query.environment_id && !chosen) throw notFound('environment');
      const digest = chosen ? await composeDigest(sql, project.id, chosen, query.period, clock()) : null;
      return digestPage(viewer, project, { environments, digest });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/flaky-tests',
    summary: "A project's tests ranked by flakiness per environment, with their trend and quarantine (made, released), and the quarantine policy's events",
    params: projectParams,
    query: z
      .object({
        environment_id: environmentIdText.default('0'),
        class: z.enum(CLASS_CHOICES).default('flaky-broken'),
        search: z.string().max(200).default(''),
        owner: z.string().max(200).default(''),
      })
      .strict(),
    render: async ({ viewer, project, query }) => {
      const now = clock();
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const environmentId = environments.some((env) => env.id === Number(query.environment_id)) ? Number(query.environment_id) : 0;
      // The window the scores are kept for and the quarantine policy reads: the page answers from it at any size.
      const days = WINDOW_DAYS;
      const search = query.search.trim();
      const { rows, total } = await rankedFlakyTests(sql, project.id, days, {
        environmentId: environmentId || undefined,
        class: classesOf(query.class),
        // What a team lead looks for first includes what failed before its class is known.
        early: query.class === 'flaky-broken',
        search: search ? `%${escapeLike(search.toLowerCase())}%` : null,
        owner: query.owner.trim() || null,
        now,
        limit: TESTS_PER_PAGE,
        offset: 0,
      });
      const testIds = [...new Set(rows.map((row) => row.test_case_id))];
      const [daily, snoozes, events, policy, counted, dayRuns] = await Promise.all([
        dailyFlakiness(sql, project.id, rows, windowStart(now, days), now.toISOString().slice(0, 10)),
        activeSnoozesOfTests(sql, project.id, testIds, now),
        listEvents(sql, project.id, { environmentId: environmentId || undefined, limit: EVENTS_SHOWN, offset: 0 }),
        getPolicy(sql, project.id),
        flakinessWindowSize(sql, project.id, environmentId || undefined),
        lastRunsByDay(sql, project.id, environmentId, windowStart(now, days), now.toISOString().slice(0, 10)),
      ]);
      const trends = new Map<string, typeof daily>();
      for (const day of daily)
        trends.set(trendKey(day.environment_id, day.test_case_id), [...(trends.get(trendKey(day.environment_id, day.test_case_id)) ?? []), day]);
      const authors = await userNames(sql, [...new Set(snoozes.flatMap((snooze) => (snooze.created_by ? [snooze.created_by] : [])))]);
      const titles = await testTitles(sql, project.id, [...new Set(events.rows.map((event) => event.test_case_id))]);
      return flakyTestsPage(viewer, project, {
        filter: { environmentId, class: query.class, search, owner: query.owner.trim(), days },
        environments,
        rows,
        total,
        days: daysOf(now, days),
        trends,
        dayRuns: new Map(dayRuns.map((run) => [trendKey(run.environment_id, run.day), run])),
        quarantines: coveringSnoozes(rows, snoozes),
        authors,
        events: events.rows,
        titles,
        policy,
        counted,
        now,
      });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/runs/:runId/compare/:otherId',
    summary: 'A run against another: new failures, fixed, still failing, added and removed tests, flaky in either, and the largest changes of duration',
    params: projectParams.extend({ runId: positiveId, otherId: positiveId }),
    render: async ({ viewer, project, params }) => {
      const comparison = await compareRuns(sql, project.id, params.runId, params.otherId, COMPARED_SHOWN);
      const shown = comparison.duration_changes.tests.map((test) => test.test_case_id);
      const slower = await shiftsInRunEnvironment(sql, project.id, params.runId, shown);
      return comparePage(viewer, project, comparison, new Map(slower.map((mark) => [mark.test_case_id, mark])));
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/runs/:runId/compare',
    summary: 'A run against the previous run of its environment and branch (sent there)',
    params: projectParams.extend({ runId: positiveId }),
    render: async ({ project, params, res }) => {
      const run = await getRunById(sql, params.runId);
      if (!run || run.project_id !== project.id) throw notFound('test run');
      const previous = await previousRun(sql, run);
      if (previous === null) throw notFound('earlier run of this environment and branch to compare with');
      res.redirect(303, `/projects/${project.id}/runs/${run.id}/compare/${previous.id}`);
      return null;
    },
  });
}
