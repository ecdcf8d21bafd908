import type { Request, Response } from 'express';
import type { AppDeps } from '../context.ts';
import { notFound } from '../http/errors.ts';
import type { Role } from '../principals.ts';
import { getProject, type Project, roleInProject } from '../projects/index.ts';
import { findSession, readCookie, SESSION_COOKIE } from '../sessions/index.ts';
import { getUserName } from '../users/index.ts';
import { DASHBOARD_POLICY, type Viewer } from './layout.ts';

/** The person signed in with the request's cookie; null when nobody is. */
export async function viewerOf(deps: Pick<AppDeps, 'sql' | 'clock'>, req: Request): Promise<Viewer | null> {
  const cookie = readCookie(req.get('cookie'), SESSION_COOKIE);
  if (!cookie) return null;
  const session = await findSession(deps.sql, cookie, deps.clock());
  if (!session) return null;
  const user = await getUserName(deps.sql, session.userId);
  return user ? { userId: session.userId, name: user.name, email: user.email, csrfToken: session.csrfToken } : null;
}

/** The signed-in person, or a redirect to sign in (null: the answer is sent). */
export async function requireViewer(deps: Pick<AppDeps, 'sql' | 'clock'>, req: Request, res: Response): Promise<Viewer | null> {
  const viewer = await viewerOf(deps, req);
  if (!viewer) res.redirect(303, `/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
  return viewer;
}

/** The project of a path and the person's role in it, when they have one; else it does not exist for them. */
export async function memberProject(sql: AppDeps['sql'], projectId: number, userId: string): Promise<{ project: Project; role: Role }> {
  const role = await roleInProject(sql, projectId, userId);
  const project = role === null ? null : await getProject(sql, projectId);
  if (!project || role === null) throw notFound('project');
  return { project, role };
}

/** Sends a page: HTML, never cached, under the dashboard's policy. */
export function sendPage(res: Response, html: string, status = 200, policy = DASHBOARD_POLICY): void {
  res.status(status);
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-security-policy', policy);
  res.send(html);
}
