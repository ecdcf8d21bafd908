import type { Request, Response } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { positiveId } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import type { Project } from '../projects/index.ts';
import type { Viewer } from './layout.ts';
import { renderAs } from './permissions.ts';
import { memberProject, requireViewer, sendPage } from './viewer.ts';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** A project page's path parameter; its pages' parameters extend it. */
export const projectParams = z.object({ projectId: positiveId }).strict();

interface PageSpec<P extends AnyObject, Q extends AnyObject> {
  path: string;
  summary: string;
  params?: P;
  query?: Q;
  /** The page's content security policy, when it differs from the dashboard's. */
  policy?: string;
  /** The page, for a signed-in person; null when `res` was answered otherwise. */
  render: (input: { viewer: Viewer; project: Project | null; params: z.infer<P>; query: z.infer<Q>; req: Request; res: Response }) => Promise<string | null>;
}

/**
 * A dashboard page: validated as every route is (an error is a page for a person), for a
 * signed-in person only (the others are sent to sign in), and, under `/projects/:projectId`, for
 * a member of the project only (for anyone else it does not exist).
 */
export function addPage<P extends AnyObject, Q extends AnyObject>(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock'>, spec: PageSpec<P, Q>): void {
  addRoute(ctx, {
    method: 'get',
    path: spec.path,
    tag: 'Dashboard',
    summary: spec.summary,
    public: true,
    params: spec.params,
    query: spec.query,
    produces: 'text/html',
    errorShape: 'page',
    handler: async ({ params, query, req, res }) => {
      const viewer = await requireViewer(deps, req, res);
      if (!viewer) return;
      const projectId = (params as { projectId?: number }).projectId;
      const membership = projectId === undefined ? null : await memberProject(deps.sql, projectId, viewer.userId);
      const project = membership?.project ?? null;
      const html = await renderAs(membership?.role ?? null, () => spec.render({ viewer, project, params, query, req, res }));
      if (html !== null) sendPage(res, html, 200, spec.policy);
    },
  });
}

/** A page under `/projects/:projectId`: `render` gets the project, of which the person is a member. */
export function addProjectPage<P extends AnyObject, Q extends AnyObject>(
  ctx: RouteContext,
  deps: Pick<AppDeps, 'sql' | 'clock'>,
  spec: Omit<PageSpec<P, Q>, 'render'> & { render: (input: Parameters<PageSpec<P, Q>['render']>[0] & { project: Project }) => Promise<string | null> },
): void {
  if (!spec.path.startsWith('/projects/:projectId/')) throw new Error(`${spec.path} is not a project's page`);
  // The path names the project: addPage has resolved it, for a member, before render.
  addPage(ctx, deps, { ...spec, render: (input) => spec.render({ ...input, project: input.project as Project }) });
}
