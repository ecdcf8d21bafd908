import { actorOf } from '../audit/index.ts';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import type { Mailer } from '../mail/index.ts';
import { getProject, listMembers } from '../projects/index.ts';
import { invitationMail } from './mail.ts';
import {
  addedResponse,
  invitationParams,
  memberListResponse,
  memberParams,
  memberResponse,
  memberUpdateSchema,
  newMemberSchema,
  successResponse,
} from './schema.ts';
import { addPerson, changeRole, presentMember, removePerson, withdrawInvitation } from './service.ts';
import { pendingInvitations } from './store.ts';

const TAG = 'Members';

/**
 * The project's people: listed for everyone in it, managed by its admins. With a mailer, an
 * invitation's link is mailed to the person after the answer (docs/decisions/mail.md).
 */
export function memberRoutes(ctx: RouteContext, deps: AppDeps, mailer: Mailer | null): void {
  const { sql, clock, config } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/members',
    tag: TAG,
    summary: "The project's members with their roles, and the invitations pending",
    response: memberListResponse,
    handler: async ({ scope }) => ({
      data: { members: (await listMembers(sql, scope.projectId)).map(presentMember), invitations: await pendingInvitations(sql, scope.projectId, clock()) },
    }),
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/members',
    tag: TAG,
    summary:
      'Add a person by email with a role: one with an account joins at once; anyone else gets an invitation, whose link is in this answer only, and is mailed to them when the server sends mail (PROCTOR_SMTP_URL)',
    body: newMemberSchema,
    response: addedResponse,
    status: 201,
    fails: { 409: 'The person is a member already' },
    handler: async ({ body, scope }) => {
      const invite = { days: config.inviteDays, publicUrl: config.publicUrl, mailed: mailer !== null };
      const added = await addPerson(sql, scope.projectId, actorOf(scope), body, invite, clock());
      if (mailer && added.invitation) {
        const project = await getProject(sql, scope.projectId);
        mailer.sendLater(invitationMail(added.invitation, project?.name ?? `project ${scope.projectId}`), 'invitation');
      }
      return { data: added };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: '/api/members/:user_id',
    tag: TAG,
    summary: "Change a member's role; the project's last admin keeps theirs",
    params: memberParams,
    body: memberUpdateSchema,
    response: memberResponse,
    fails: { 409: "The member is the project's last admin" },
    handler: async ({ params, body, scope }) => ({
      data: { member: await changeRole(sql, scope.projectId, actorOf(scope), params.user_id, body.role, clock()) },
    }),
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/members/:user_id',
    tag: TAG,
    summary: 'Remove a member: their session and personal keys no longer reach the project; the last admin stays',
    params: memberParams,
    response: successResponse,
    fails: { 409: "The member is the project's last admin" },
    handler: async ({ params, scope }) => {
      await removePerson(sql, scope.projectId, actorOf(scope), params.user_id, clock());
      return { data: { success: true } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/invitations/:id',
    tag: TAG,
    summary: 'Withdraw a pending invitation: its link no longer works',
    params: invitationParams,
    response: successResponse,
    handler: async ({ params, scope }) => {
      await withdrawInvitation(sql, scope.projectId, actorOf(scope), params.id, clock());
      return { data: { success: true } };
    },
  });
}
