import { z } from 'zod';
import { listChanges } from '../audit/index.ts';
import { listKeys } from '../auth/index.ts';
import type { AppDeps } from '../context.ts';
import { ForbiddenError } from '../errors.ts';
import type { RouteContext } from '../http/route.ts';
import { pendingInvitations, presentMember } from '../members/index.ts';
import { listMembers } from '../projects/index.ts';
import { addProjectPage, projectParams } from './page-route.ts';
import { mayCall } from './permissions.ts';
import { auditPage, keysPage, membersPage } from './team-pages.tsx';

const EVENTS_PER_PAGE = 100;

/** A page the person's role does not reach (as the API it shows would refuse them). */
function onlyFor(api: string, what: string): void {
  if (!mayCall(api)) throw new ForbiddenError(`${what} are for the project's admins`);
}

/** A project's people, keys and audit trail. */
export function teamRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/members',
    summary: "A project's members and pending invitations: admins add people by email, change roles, remove them",
    params: projectParams,
    render: async ({ viewer, project }) => {
      const members = (await listMembers(sql, project.id)).map(presentMember);
      return membersPage(viewer, project, { members, invitations: await pendingInvitations(sql, project.id, clock()), mail: deps.config.mail !== null });
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/keys',
    summary: "A project's keys: who made each, when it was last used; admins create (shown once) and revoke them",
    params: projectParams,
    render: async ({ viewer, project }) => {
      onlyFor('GET /api/keys', 'Keys');
      return keysPage(viewer, project, await listKeys(sql, { projectId: project.id }));
    },
  });

  addProjectPage(ctx, deps, {
    path: '/projects/:projectId/audit',
    summary: "A project's audit trail: every change of access or configuration, who made it, before and after",
    params: projectParams,
    query: z.object({ action: z.string().max(100).optional(), page: z.coerce.number().int().min(1).max(10_000).default(1) }).strict(),
    render: async ({ viewer, project, query }) => {
      onlyFor('GET /api/audit-events', 'The audit trail');
      const action = query.action || undefined;
      const { events, total } = await listChanges(
        sql,
        project.id,
        { action, page: query.page, per_page: EVENTS_PER_PAGE },
        EVENTS_PER_PAGE,
        (query.page - 1) * EVENTS_PER_PAGE,
      );
      return auditPage(viewer, project, { events, action, page: query.page, pages: Math.max(1, Math.ceil(total / EVENTS_PER_PAGE)) });
    },
  });
}
