import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { dailyRuns, dailyTestCounts, dayWindow, testCaseMetrics } from '../analytics/index.ts';
import { listEnvironments } from '../environments/index.ts';
import { foldMembers, getGroup, listGroups, memberEvents } from '../failuregroups/index.ts';
import { notFound } from '../http/errors.ts';
import { positiveId } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { getProject, isMember, projectsOfUser } from '../projects/index.ts';
import { getRunById, listRuns, runDetails } from '../runs/index.ts';
import { listSnoozes } from '../snoozes/index.ts';
import { testTitles } from '../testcases/index.ts';
import { DASHBOARD_SCRIPT } from './assets.ts';
import { dashboardPolicy } from './layout.ts';
import { projectsPage, runsPage } from './pages.ts';
import { analyticsPage } from './analytics-page.ts';
import { environmentsPage } from './environments-page.ts';
import { groupPage, groupsPage } from './groups-page.ts';
import { runPage } from './run-page.ts';
import { snoozesPage } from './snoozes-page.ts';
import { signInRoutes } from './signin.ts';
import { requireViewer, sendPage } from './viewer.ts';

const TAG = 'Dashboard';
const RUNS_PER_PAGE = 50;

export function dashboardRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;
  const storageOrigin = deps.storage.direct?.origin ?? null;

  /** The project of the path, when the person is a member; else it does not exist for them. */
  const projectFor = async (projectId: number, userId: string) => {
    const project = (await isMember(sql, projectId, userId)) ? await getProject(sql, projectId) : null;
    if (!project) throw notFound('project');
    return project;
  };

  ctx.open.get('/assets/dashboard.js', (_req, res) => {
    res.setHeader('content-type', 'text/javascript; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.send(DASHBOARD_SCRIPT);
  });

  signInRoutes(ctx, deps);

  addRoute(ctx, {
    method: 'get',
    path: '/',
    tag: TAG,
    summary: 'The projects the signed-in person belongs to',
    public: true,
    produces: 'text/html',
    handler: async ({ req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      sendPage(res, projectsPage(viewer, await projectsOfUser(sql, viewer.userId)));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/runs',
    tag: TAG,
    summary: "A project's runs, newest first, by environment, branch and state; runs under way update live",
    public: true,
    params: z.object({ projectId: positiveId }).strict(),
    query: z
      .object({
        environment: z.string().max(200).optional(),
        branch: z.string().max(500).optional(),
        state: z.enum(['', 'pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled']).optional(),
      })
      .strict(),
    produces: 'text/html',
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const filter = { environment: query.environment || undefined, branch: query.branch || undefined, state: query.state || undefined };
      const { rows } = await listRuns(sql, project.id, {
        environment: filter.environment,
        branch: filter.branch,
        states: filter.state ? [filter.state] : [],
        limit: RUNS_PER_PAGE,
        offset: 0,
      });
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const given = Object.entries(filter).filter((entry): entry is [string, string] => entry[1] !== undefined);
      const api = new URLSearchParams([['per_page', String(RUNS_PER_PAGE)], ...given]);
      sendPage(
        res,
        runsPage(viewer, {
          project,
          runs: rows,
          environments,
          filter,
          liveUrl: `/api/test-runs?${api.toString()}`,
        }),
      );
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/runs/:runId',
    tag: TAG,
    summary: 'A run: counts, failures first with their errors, screenshots and traces; cancel, rerun, rerun the failed tests, snooze a failure',
    public: true,
    params: z.object({ projectId: positiveId, runId: positiveId }).strict(),
    produces: 'text/html',
    handler: async ({ params, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const run = await getRunById(sql, params.runId);
      if (!run || run.project_id !== project.id) throw notFound('test run');
      const now = clock();
      sendPage(res, runPage(viewer, project, run, await runDetails(sql, deps, run.id, now), now), 200, dashboardPolicy(storageOrigin));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/environments',
    tag: TAG,
    summary: "A project's environments: create and edit them, trigger a run, and each one's badge with its Markdown",
    public: true,
    params: z.object({ projectId: positiveId }).strict(),
    produces: 'text/html',
    handler: async ({ params, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const { rows } = await listEnvironments(sql, project.id, 100, 0);
      sendPage(res, environmentsPage(viewer, project, rows, deps.config.publicUrl));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/snoozes',
    tag: TAG,
    summary: "A project's snoozes, active or expired: create, expire now, delete",
    public: true,
    params: z.object({ projectId: positiveId }).strict(),
    query: z.object({ status: z.enum(['active', 'expired', 'all']).default('active') }).strict(),
    produces: 'text/html',
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const now = clock();
      const { rows } = await listSnoozes(sql, project.id, { status: query.status, now, limit: 100, offset: 0 });
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const titles = await testTitles(sql, project.id, [...new Set(rows.flatMap((row) => row.test_ids))]);
      sendPage(res, snoozesPage(viewer, project, { status: query.status, snoozes: rows, environments: new Map(environments.map((env) => [env.id, env.name])), titles, now }));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/failure-groups',
    tag: TAG,
    summary: "A project's failure groups, most recently seen first",
    public: true,
    params: z.object({ projectId: positiveId }).strict(),
    query: z.object({ status: z.enum(['open', 'resolved', 'ignored']).optional() }).strict(),
    produces: 'text/html',
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const { rows } = await listGroups(sql, project.id, { status: query.status, limit: 100, offset: 0 });
      sendPage(res, groupsPage(viewer, project, rows, query.status));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/failure-groups/:groupId',
    tag: TAG,
    summary: 'A failure group: its tests, its diagnosis and status to set, a test to detach',
    public: true,
    params: z.object({ projectId: positiveId, groupId: z.string().min(1).max(200) }).strict(),
    produces: 'text/html',
    handler: async ({ params, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const group = await getGroup(sql, project.id, params.groupId);
      if (!group) throw notFound('failure group');
      const members = foldMembers(await memberEvents(sql, project.id, group.id));
      const titles = await testTitles(sql, project.id, members.map((member) => member.test_case_id));
      sendPage(res, groupPage(viewer, project, group, members, titles));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/analytics',
    tag: TAG,
    summary: 'Daily runs with their pass rate, tests run a day, the flakiest and the most failing tests, drawn',
    public: true,
    params: z.object({ projectId: positiveId }).strict(),
    query: z.object({ days: z.enum(['7', '14', '30', '90']).default('30'), environment_id: z.string().regex(/^\d{1,10}$/).default('0') }).strict(),
    produces: 'text/html',
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const environmentId = environments.some((env) => env.id === Number(query.environment_id)) ? Number(query.environment_id) : 0;
      const windowDays = Number(query.days);
      const window = dayWindow({ days: windowDays }, clock());
      const ranked = (by: 'flaky_rate' | 'fail_rate') =>
        testCaseMetrics(sql, project.id, environmentId, window, { tags: [], search: null }, { by, direction: 'desc', limit: 10 });
      const [runs, testCounts, flakiest, failing] = await Promise.all([
        dailyRuns(sql, project.id, environmentId, window.from, window.to),
        dailyTestCounts(sql, project.id, environmentId, window.from, window.to),
        ranked('flaky_rate'),
        ranked('fail_rate'),
      ]);
      sendPage(
        res,
        analyticsPage(viewer, project, {
          days: window.days,
          windowDays,
          environmentId,
          environments,
          runs,
          testCounts,
          flakiest: flakiest.rows.filter((row) => row.flaky_count > 0),
          failing: failing.rows.filter((row) => row.fail_count > 0),
        }),
      );
    },
  });
}
