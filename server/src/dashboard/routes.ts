import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { listEnvironments } from '../environments/index.ts';
import { FAILURE_CATEGORIES } from '../failuregroups/index.ts';
import { notFound } from '../http/errors.ts';
import { positiveId } from '../http/fields.ts';
import type { RouteContext } from '../http/route.ts';
import { allProjects, projectsOfUser } from '../projects/index.ts';
import { isInstanceAdmin } from '../users/index.ts';
import {
  getRunById,
  laneTimeline,
  listRuns,
  livePosition,
  liveQuery,
  runPageDetails,
  streamClient,
  streamRun,
  runsListOf,
  runsListQuery,
  streamRunsList,
  timelineAttempts,
} from '../runs/index.ts';
import { addRoute } from '../http/route.ts';
import { memberProject, requireViewer } from './viewer.ts';
import { dashboardAssets, IMMUTABLE } from './assets.ts';
import { dashboardPolicy, FAVICON_SVG } from './layout.ts';
import { projectsPage, runsPage } from './pages.tsx';
import { runPage } from './run-page.tsx';
import { visualPage } from './visual-changes-page.tsx';
import { presentCommit, runCommits, runVisualChanges, visualCounts } from '../visual/index.ts';
import type { Mailer } from '../mail/index.ts';
import { signInRoutes } from './signin.ts';
import { projectRoutes } from './project-routes.ts';
import { teamRoutes } from './team-routes.ts';
import { triageRoutes } from './triage-routes.ts';
import { addPage, addProjectPage, projectParams } from './page-route.ts';
import { isTerminal } from '../states.ts';

const RUNS_PER_PAGE = 50;

export function dashboardRoutes(ctx: RouteContext, deps: AppDeps, mailer: Mailer | null): void {
  const { sql, clock } = deps;
  const storageOrigin = deps.storage.direct?.origin ?? null;

  // Browsers ask for /favicon.ico on every page whether a page names an icon or not.
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    ctx.open.get(path, (_req, res) => {
      res.setHeader('content-type', 'image/svg+xml');
      res.setHeader('cache-control', 'public, max-age=86400');
      res.send(FAVICON_SVG);
    });
  }

  // The script and stylesheet under their content-hashed names, kept by browsers for good.
  const assets = dashboardAssets();
  ctx.open.get('/assets/:file', (req, res, next) => {
    const file = assets.files.get(req.params.file);
    if (!file) return next();
    res.setHeader('content-type', file.type);
    res.setHeader('cache-control', IMMUTABLE);
    res.send(file.body);
  });

  signInRoutes(ctx, deps, mailer);

  addPage(ctx, deps, {
    path: '/',
    summary: "The projects the signed-in person belongs to (an instance admin's: every project, and a form to make one)",
    render: async ({ viewer }) => {
      const instanceAdmin = await isInstanceAdmin(sql, viewer.userId);
      return projectsPage(viewer, instanceAdmin ? await allProjects(sql) : await projectsOfUser(sql, viewer.userId), instanceAdmin);
    },
  });

  // Runs under way, live: the runs list's stream and a run's (registered before the run page, whose path would take `events` for a run).
  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/runs/events',
    tag: 'Dashboard',
    summary:
      "The runs list's live stream (server-sent events, a member's session): as GET /api/test-runs/events, a `run` event with a run's row as the listed runs move and as runs the list's filter shows are made",
    public: true,
    params: projectParams,
    query: runsListQuery,
    produces: 'text/event-stream',
    fails: { 429: 'This person holds as many live streams at once as they may' },
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      await memberProject(sql, params.projectId, viewer.userId);
      await streamRunsList(deps, req, res, streamClient({ kind: 'user', userId: viewer.userId }), params.projectId, runsListOf(query));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/projects/:projectId/runs/:runId/events',
    tag: 'Dashboard',
    summary: "A run's live stream for its page (a member's session): as GET /api/test-runs/{id}/events, from the page's position (`from`) or Last-Event-ID",
    public: true,
    params: projectParams.extend({ runId: positiveId }),
    query: liveQuery,
    produces: 'text/event-stream',
    fails: { 429: 'This person holds as many live streams at once as they may' },
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      await memberProject(sql, params.projectId, viewer.userId);
      const run = await getRunById(sql, params.runId);
      if (!run || run.project_id !== params.projectId) throw notFound('test run');
      await streamRun(deps, req, res, streamClient({ kind: 'user', userId: viewer.userId }), run.id, query.from);
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/runs',
    summary: "A project's runs, newest first, by environment, branch, state and owner (runs with a failed or flaky test of theirs); runs under way update live",
    params: projectParams,
    query: z
      .object({
        environment: z.string().max(200).optional(),
        branch: z.string().max(500).optional(),
        state: z.enum(['', 'pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled']).optional(),
        owner: z.string().max(200).optional(),
      })
      .strict(),
    render: async ({ viewer, project, query }) => {
      const filter = {
        environment: query.environment || undefined,
        branch: query.branch || undefined,
        state: query.state || undefined,
        owner: query.owner || undefined,
      };
      const { rows } = await listRuns(sql, project.id, {
        environment: filter.environment,
        branch: filter.branch,
        states: filter.state ? [filter.state] : [],
        owner: filter.owner,
        limit: RUNS_PER_PAGE,
        offset: 0,
      });
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      // The API call that lists the same runs, for the page's live update.
      const given = Object.entries(filter).filter((entry): entry is [string, string] => entry[1] !== undefined);
      const api = new URLSearchParams([['per_page', String(RUNS_PER_PAGE)], ...given]);
      return runsPage(viewer, { project, runs: rows, environments, filter, liveUrl: `/api/test-runs?${api.toString()}` });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/runs/:runId',
    summary:
      'A run: counts, failures first with their errors and kinds (filtered by kind), screenshots and traces; cancel, rerun, rerun the failed tests, snooze a failure',
    params: projectParams.extend({ runId: positiveId }),
    query: z.object({ all: z.enum(['1']).optional(), category: z.enum(FAILURE_CATEGORIES).optional(), owner: z.string().min(1).max(200).optional() }).strict(),
    policy: dashboardPolicy(storageOrigin),
    render: async ({ viewer, project, params, query }) => {
      const run = await getRunById(sql, params.runId);
      if (!run || run.project_id !== project.id) throw notFound('test run');
      const now = clock();
      // A run under way: where its stream starts, read before the page's results (a result in between comes twice; the page replaces its row).
      const live = isTerminal(run.state) ? null : await livePosition(sql, run.id);
      const details = await runPageDetails(sql, deps, run, now, query.all === '1');
      const [visual, attempts] = await Promise.all([visualCounts(sql, project.id, run.id), timelineAttempts(sql, run.id)]);
      const timeline = laneTimeline(attempts.attempts, attempts.total);
      return runPage(viewer, project, run, details, now, query.category ?? null, query.owner ?? null, visual, timeline, live);
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/runs/:runId/visual',
    summary:
      "A run's visual changes to review: baseline and new side by side, as an overlay with a slider, and the diff, the changed areas boxed; zoom, keys, approve or reject",
    params: projectParams.extend({ runId: positiveId }),
    policy: dashboardPolicy(storageOrigin),
    render: async ({ viewer, project, params }) => {
      const run = await getRunById(sql, params.runId);
      if (!run || run.project_id !== project.id) throw notFound('test run');
      const commits = (await runCommits(sql, project.id, run.id)).map(presentCommit);
      return visualPage(viewer, project, run, await runVisualChanges(deps, project.id, run.id, clock()), commits);
    },
  });

  projectRoutes(ctx, deps);
  triageRoutes(ctx, deps);
  teamRoutes(ctx, deps);
}
