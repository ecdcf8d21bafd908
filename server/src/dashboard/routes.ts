import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { listEnvironments } from '../environments/index.ts';
import { notFound } from '../http/errors.ts';
import { positiveId } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { projectsOfUser } from '../projects/index.ts';
import { getRunById, listRuns, runPageDetails } from '../runs/index.ts';
import { DASHBOARD_SCRIPT } from './assets.ts';
import { dashboardPolicy } from './layout.ts';
import { projectsPage, runsPage } from './pages.ts';
import { runPage } from './run-page.ts';
import { signInRoutes } from './signin.ts';
import { projectRoutes } from './project-routes.ts';
import { memberProject, requireViewer, sendPage } from './viewer.ts';

const TAG = 'Dashboard';
const RUNS_PER_PAGE = 50;

export function dashboardRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;
  const storageOrigin = deps.storage.direct?.origin ?? null;

  const projectFor = (projectId: number, userId: string) => memberProject(sql, projectId, userId);

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
    errorShape: 'page',
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
    errorShape: 'page',
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
    query: z.object({ all: z.enum(['1']).optional() }).strict(),
    produces: 'text/html',
    errorShape: 'page',
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const project = await projectFor(params.projectId, viewer.userId);
      const run = await getRunById(sql, params.runId);
      if (!run || run.project_id !== project.id) throw notFound('test run');
      const now = clock();
      const details = await runPageDetails(sql, deps, run, now, query.all === '1');
      sendPage(res, runPage(viewer, project, run, details, now), 200, dashboardPolicy(storageOrigin));
    },
  });
  projectRoutes(ctx, deps);
}
