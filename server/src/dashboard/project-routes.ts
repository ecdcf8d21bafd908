import { z } from 'zod';
import { brokeWhen, groupsOverTime, testTimeline } from '../comparisons/index.ts';
import { dailyRuns, dailyTestCounts, dayWindow, lastRunOfDay, lastRunsByDay, testCaseMetrics, testHistory } from '../analytics/index.ts';
import type { AppDeps } from '../context.ts';
import { listSlowerTests } from '../durations/index.ts';
import { listEnvironments } from '../environments/index.ts';
import { foldMembers, getGroup, groupsOfTest, listGroups, memberEvents } from '../failuregroups/index.ts';
import { getTrackerSettings, issueOfTest, presentTrackerSettings } from '../trackers/index.ts';
import { getPolicy } from '../flaky/index.ts';
import { notFound } from '../http/errors.ts';
import { escapeLike } from '../db.ts';
import { runnerTestId } from '../http/fields.ts';
import type { RouteContext } from '../http/route.ts';
import { listDestinations, listOwnerRoutes, listSubscriptions, presentDestination, presentSubscription } from '../notifications/index.ts';
import { retentionPolicyOf } from '../retention/index.ts';
import { listSnoozes, snoozesOfTest } from '../snoozes/index.ts';
import { runNumbers } from '../runs/index.ts';
import { findTests, getTestCase, testTitles } from '../testcases/index.ts';
import { isInstanceAdmin, userNames } from '../users/index.ts';
import { listBindings } from '../bindings/index.ts';
import { analyticsPage } from './analytics-page.tsx';
import { environmentsPage } from './environments-page.tsx';
import { groupPage, groupsPage, occurrencesByRun } from './groups-page.tsx';
import { settingsPage } from './settings-page.tsx';
import { snoozesPage } from './snoozes-page.tsx';
import { testPage, testsPage } from './tests-page.tsx';
import { addProjectPage, projectParams } from './page-route.ts';

/** The project's latest runs a test's page reads to tell when it broke. */
const TIMELINE_RUNS = 1000;

/** How many found tests the new-snooze form offers to pick. */
const TESTS_FOUND = 50;

const windowDays = z.enum(['7', '14', '30', '90']).default('30');

/** A project's pages beside its runs: environments, snoozes, failure groups, analytics, tests, settings. */
export function projectRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/environments',
    summary: "A project's environments: create and edit them, trigger a run, and each one's badge with its Markdown",
    params: projectParams,
    render: async ({ viewer, project }) => {
      const { rows } = await listEnvironments(sql, project.id, 100, 0);
      return environmentsPage(viewer, project, rows, deps.config.publicUrl);
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/snoozes',
    summary: "A project's snoozes, active or expired: create (picking tests found by title, file or tag), expire now, delete",
    params: projectParams,
    query: z.object({ status: z.enum(['active', 'expired', 'all']).default('active'), find: z.string().max(200).optional() }).strict(),
    render: async ({ viewer, project, query }) => {
      const now = clock();
      const words = query.find?.trim() ?? '';
      const found = words ? { words, ...(await findTests(sql, project.id, words, TESTS_FOUND)) } : null;
      const { rows } = await listSnoozes(sql, project.id, { status: query.status, now, limit: 100, offset: 0 });
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const titles = await testTitles(sql, project.id, [...new Set(rows.flatMap((row) => row.test_ids))]);
      const authors = await userNames(sql, [...new Set(rows.flatMap((row) => (row.created_by ? [row.created_by] : [])))]);
      return snoozesPage(viewer, project, {
        authors,
        found: found && { words: found.words, tests: found.rows, total: found.total },
        status: query.status,
        snoozes: rows,
        environments: new Map(environments.map((env) => [env.id, env.name])),
        titles,
        now,
      });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/settings',
    summary:
      "A project's settings: where run endings are told (add, remove), the repositories bound to it, how long runs keep their details, and the quarantine policy",
    params: projectParams,
    render: async ({ viewer, project }) => {
      const { rows } = await listDestinations(sql, project.id, 100, 0);
      return settingsPage(viewer, project, {
        destinations: rows.map(presentDestination),
        bindings: await listBindings(sql, project.id),
        instanceAdmin: await isInstanceAdmin(sql, viewer.userId),
        policy: await retentionPolicyOf(sql, deps.config, project.id),
        quarantine: await getPolicy(sql, project.id),
        mail: deps.config.mail !== null,
        digests: {
          subscriptions: (await listSubscriptions(sql, project.id, 100, 0)).rows.map(presentSubscription),
          routes: (await listOwnerRoutes(sql, project.id, 200, 0)).rows,
          environments: (await listEnvironments(sql, project.id, 100, 0)).rows.map((env) => ({ id: env.id, name: env.name })),
        },
        tracker: await getTrackerSettings(sql, project.id).then((row) => row && presentTrackerSettings(row)),
      });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/failure-groups',
    summary: "A project's failure groups, most recently seen first",
    params: projectParams,
    query: z.object({ status: z.enum(['open', 'resolved', 'ignored']).optional(), owner: z.string().max(200).optional() }).strict(),
    render: async ({ viewer, project, query }) => {
      const owner = query.owner?.trim() || null;
      const { rows } = await listGroups(sql, project.id, { status: query.status, owner: owner ?? undefined, limit: 100, offset: 0 });
      return groupsPage(viewer, project, rows, query.status, owner);
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/failure-groups/:groupId',
    summary: 'A failure group: its tests, its diagnosis and status to set, a test to detach',
    params: projectParams.extend({ groupId: z.string().min(1).max(200) }),
    render: async ({ viewer, project, params }) => {
      const group = await getGroup(sql, project.id, params.groupId);
      if (!group) throw notFound('failure group');
      const events = await memberEvents(sql, project.id, group.id);
      const members = foldMembers(events);
      const titles = await testTitles(
        sql,
        project.id,
        members.map((member) => member.test_case_id),
      );
      const numbers = await runNumbers(sql, project.id, [
        ...members.flatMap((member) => (member.last_test_run_id === null ? [] : [member.last_test_run_id])),
        ...events.flatMap((event) => (event.kind !== 'detach' && event.test_run_id !== null ? [event.test_run_id] : [])),
      ]);
      return groupPage(
        viewer,
        project,
        group,
        members,
        titles,
        numbers,
        occurrencesByRun(events, numbers),
        (await getTrackerSettings(sql, project.id)) !== null,
      );
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/analytics',
    summary: 'Daily runs with their pass rate, tests run a day, the flakiest and the most failing tests, drawn',
    params: projectParams,
    query: z
      .object({
        days: z.enum(['7', '14', '30', '90']).default('30'),
        environment_id: z
          .string()
          .regex(/^\d{1,10}$/)
          .default('0'),
      })
      .strict(),
    render: async ({ viewer, project, query }) => {
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const environmentId = environments.some((env) => env.id === Number(query.environment_id)) ? Number(query.environment_id) : 0;
      const windowDays = Number(query.days);
      const window = dayWindow({ days: windowDays }, clock());
      const ranked = (by: 'flaky_rate' | 'fail_rate') =>
        testCaseMetrics(sql, project.id, environmentId, window, { tags: [], search: null }, { by, direction: 'desc', limit: 10 });
      const [runs, testCounts, flakiest, failing, dayRuns] = await Promise.all([
        dailyRuns(sql, project.id, environmentId, window.from, window.to),
        dailyTestCounts(sql, project.id, environmentId, window.from, window.to),
        ranked('flaky_rate'),
        ranked('fail_rate'),
        lastRunsByDay(sql, project.id, environmentId, window.from, window.to),
      ]);
      return analyticsPage(viewer, project, {
        days: window.days,
        windowDays,
        environmentId,
        environments,
        runs,
        testCounts,
        flakiest: flakiest.rows.filter((row) => row.flaky_count > 0),
        failing: failing.rows.filter((row) => row.fail_count > 0),
        dayRuns: lastRunOfDay(dayRuns),
      });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/tests',
    summary:
      "A project's tests that ran in the window, by search and tag, ranked by fail rate, flaky rate, mean duration or last run, each with its latest outcomes",
    params: projectParams,
    query: z
      .object({
        search: z.string().max(200).optional(),
        tag: z.string().max(100).optional(),
        owner: z.string().max(200).optional(),
        order_by: z.enum(['fail_rate', 'flaky_rate', 'duration', 'last_run']).default('fail_rate'),
        days: windowDays,
      })
      .strict(),
    render: async ({ viewer, project, query }) => {
      const window = dayWindow({ days: Number(query.days) }, clock());
      const tag = query.tag ? (query.tag.startsWith('@') ? query.tag : `@${query.tag}`) : undefined;
      const search = query.search ? `%${escapeLike(query.search.toLowerCase())}%` : null;
      const { rows } = await testCaseMetrics(
        sql,
        project.id,
        0,
        window,
        { tags: tag ? [tag] : [], search, owner: query.owner?.trim() || null },
        { by: query.order_by, direction: 'desc', limit: 100 },
      );
      const history = await testHistory(
        sql,
        project.id,
        0,
        rows.map((row) => row.test_case_id),
        window,
        20,
      );
      const byTest = new Map<string, typeof history>();
      for (const row of history) byTest.set(row.test_case_id, [...(byTest.get(row.test_case_id) ?? []), row]);
      return testsPage(viewer, project, {
        rows,
        history: byTest,
        filter: { search: query.search, tag: query.tag, owner: query.owner, order_by: query.order_by, days: Number(query.days) },
      });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/tests/:testId',
    summary:
      'A test: when it broke in each environment and branch (its last pass and first failure, their commits compared), its latest outcomes, its duration, its failure groups over time and snoozes',
    params: projectParams.extend({ testId: runnerTestId }),
    render: async ({ viewer, project, params }) => {
      const test = await getTestCase(sql, project.id, params.testId);
      if (!test) throw notFound('test');
      const now = clock();
      const [history, timeline, groups, snoozes, slower, issue, tracker] = await Promise.all([
        testHistory(sql, project.id, 0, [params.testId], dayWindow({ days: 90 }, now), 100),
        testTimeline(sql, project.id, params.testId, TIMELINE_RUNS),
        groupsOfTest(sql, project.id, params.testId),
        snoozesOfTest(sql, project.id, params.testId),
        listSlowerTests(sql, project.id, { environmentId: null, testCaseId: params.testId, limit: 20, offset: 0 }),
        issueOfTest(sql, project.id, params.testId),
        getTrackerSettings(sql, project.id),
      ]);
      return testPage(viewer, project, {
        id: params.testId,
        title: test.name,
        file: test.file_path,
        runnerProject: test.runner_project,
        owners: test.owners,
        history,
        broke: brokeWhen(timeline),
        groupsSeen: groupsOverTime(timeline),
        groups,
        snoozes,
        slower: slower.rows,
        issue: issue && { link_id: issue.id, tracker: issue.tracker, key: issue.issue_key, url: issue.issue_url, state: issue.issue_state },
        hasTracker: tracker !== null,
        now,
      });
    },
  });
}
