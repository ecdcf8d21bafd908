import express from 'express';
import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { listEnvironments } from '../environments/index.ts';
import { notFound } from '../http/errors.ts';
import { positiveId } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { getProject, isMember, projectsOfUser } from '../projects/index.ts';
import { listRuns, presentRun } from '../runs/index.ts';
import { clearedSessionCookie, consumeLoginLink, createSession, deleteSession, readCookie, SESSION_COOKIE, sessionCookie } from '../sessions/index.ts';
import { DASHBOARD_SCRIPT } from './assets.ts';
import { projectsPage, runsPage, signInPage } from './pages.ts';
import { requireViewer, sendPage, viewerOf } from './viewer.ts';

const TAG = 'Dashboard';
const RUNS_PER_PAGE = 50;

/** Where to go after signing in: a path of this origin only, never another site. */
function localPath(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\\\') ? next : '/';
}

export function dashboardRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config } = deps;
  const secure = config.publicUrl.startsWith('https://');

  ctx.open.get('/assets/dashboard.js', (_req, res) => {
    res.setHeader('content-type', 'text/javascript; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.send(DASHBOARD_SCRIPT);
  });

  addRoute(ctx, {
    method: 'get',
    path: '/sign-in',
    tag: TAG,
    summary: 'The sign-in page',
    public: true,
    query: z.object({ next: z.string().max(2000).optional() }).strict(),
    produces: 'text/html',
    handler: async ({ query, req, res }) => {
      if (await viewerOf(deps, req)) return res.redirect(303, localPath(query.next));
      sendPage(res, signInPage(localPath(query.next), null));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/sign-in/link',
    tag: TAG,
    summary: 'Sign in with a one-time link (`proctor user login-link`): valid 15 minutes, once',
    public: true,
    query: z.object({ token: z.string().min(1).max(200), next: z.string().max(2000).optional() }).strict(),
    produces: 'text/html',
    handler: async ({ query, res }) => {
      const now = clock();
      const userId = await consumeLoginLink(sql, query.token, now);
      if (!userId) return sendPage(res, signInPage('/', 'This sign-in link has been used, has expired, or is not one: ask for a new one.'), 400);
      const { cookie } = await createSession(sql, userId, now);
      res.setHeader('set-cookie', sessionCookie(cookie, secure));
      res.redirect(303, localPath(query.next));
    },
  });

  // A form post (the header's button): its body is the CSRF token, read here alone.
  ctx.open.post('/sign-out', express.urlencoded({ extended: false, limit: '2kb' }), async (req, res) => {
    const viewer = await viewerOf(deps, req);
    if (viewer && (req.body as { _csrf?: string } | undefined)?._csrf !== viewer.csrfToken) {
      return sendPage(res, signInPage('/', 'That form was not sent from this session: nothing was done.'), 403);
    }
    const cookie = readCookie(req.get('cookie'), SESSION_COOKIE);
    if (cookie) await deleteSession(sql, cookie);
    res.setHeader('set-cookie', clearedSessionCookie(secure));
    res.redirect(303, '/sign-in');
  });

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
      // Another project's pages do not exist for this person.
      const project = (await isMember(sql, params.projectId, viewer.userId)) ? await getProject(sql, params.projectId) : null;
      if (!project) throw notFound('project');
      const filter = { environment: query.environment || undefined, branch: query.branch || undefined, state: query.state || undefined };
      const { rows } = await listRuns(sql, project.id, {
        environment: filter.environment,
        branch: filter.branch,
        states: filter.state ? [filter.state] : [],
        limit: RUNS_PER_PAGE,
        offset: 0,
      });
      const { rows: environments } = await listEnvironments(sql, project.id, 100, 0);
      const now = clock();
      const given = Object.entries(filter).filter((entry): entry is [string, string] => entry[1] !== undefined);
      const api = new URLSearchParams([['per_page', String(RUNS_PER_PAGE)], ...given]);
      sendPage(
        res,
        runsPage(viewer, {
          project,
          runs: rows,
          environments,
          filter,
          linkOf: (run) => {
            // The run page on this origin, whatever PUBLIC_URL says.
            const summary = new URL(presentRun(run, config.publicUrl, deps.signingSecret, now).summary_url);
            return `${summary.pathname}${summary.search}`;
          },
          liveUrl: `/api/test-runs?${api.toString()}`,
        }),
      );
    },
  });
}
