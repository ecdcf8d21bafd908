import { type Actor, recordChange } from '../audit/index.ts';
import type { Sql, Tx } from '../db.ts';
import { ConflictError, ForbiddenError, GoneError, NotFoundError } from '../errors.ts';
import type { Role } from '../principals.ts';
import { addMember, countAdmins, listMembers, lockMemberships, type Member, removeMember, setMemberRole } from '../projects/index.ts';
import { createUserUnlessTaken, userIdOfEmail } from '../users/index.ts';
import type { InvitationView, MemberView, NewMember } from './schema.ts';
import { createInvitation, deleteInvitation, findInvitation, markInvitationUsed } from './store.ts';

// People in a project: added by email (an invitation when they have no account yet), their roles
// changed, removed; a project always keeps an admin. Each change is audited in its transaction.

export function presentMember(member: Member): MemberView {
  return { ...member, joined_at: member.joined_at.toISOString() };
}

async function memberOf(sql: Tx, projectId: number, userId: string): Promise<Member | null> {
  return (await listMembers(sql, projectId)).find((member) => member.user_id === userId) ?? null;
}

export interface Added {
  member?: MemberView;
  invitation?: InvitationView & { url: string; mailed: boolean };
}

export interface InviteSettings {
  days: number;
  /** The link's base: the server's public URL. */
  publicUrl: string;
  /** Whether the link is mailed (by the caller, once the invitation is committed); the command line prints it instead. */
  mailed?: boolean;
}

/** A person joins by email: at once when they have an account, else by an invitation link shown once. */
export function addPerson(sql: Sql, projectId: number, actor: Actor, given: NewMember, invite: InviteSettings, now: Date): Promise<Added> {
  return sql.begin(async (tx) => {
    const userId = await userIdOfEmail(tx, given.email);
    if (userId === null) {
      const { invitation, token } = await createInvitation(tx, {
        projectId,
        email: given.email,
        role: given.role,
        createdBy: actor.kind === 'user' ? actor.id : null,
        now,
        days: invite.days,
      });
      await recordChange(tx, { projectId, actor, action: 'invitation.created', target: `invitation:${invitation.id}`, after: invitation }, now);
      return { invitation: { ...invitation, url: `${invite.publicUrl}/invitations/accept?token=${token}`, mailed: invite.mailed ?? false } };
    }
    if (!(await addMember(tx, projectId, userId, given.role, now))) throw new ConflictError(`body.email: ${given.email} is a member of this project already`);
    const member = presentMember((await memberOf(tx, projectId, userId)) as Member);
    await recordChange(tx, { projectId, actor, action: 'member.added', target: `user:${userId}`, after: member }, now);
    return { member };
  });
}

/** A member's new role; the last admin is not demoted. */
export function changeRole(sql: Sql, projectId: number, actor: Actor, userId: string, role: Role, now: Date): Promise<MemberView> {
  return sql.begin(async (tx) => {
    await lockMemberships(tx, projectId);
    const before = await memberOf(tx, projectId, userId);
    if (!before) throw new NotFoundError('member not found');
    if (before.role === 'admin' && role !== 'admin' && (await countAdmins(tx, projectId)) === 1) {
      throw new ConflictError(`${before.email} is the project's last admin: make another member admin first`);
    }
    await setMemberRole(tx, projectId, userId, role);
    const after = presentMember({ ...before, role });
    if (before.role !== role)
      await recordChange(
        tx,
        { projectId, actor, action: 'member.role_changed', target: `user:${userId}`, before: { role: before.role }, after: { role } },
        now,
      );
    return after;
  });
}

/** A member leaves the project; the last admin does not. */
export function removePerson(sql: Sql, projectId: number, actor: Actor, userId: string, now: Date): Promise<void> {
  return sql.begin(async (tx) => {
    await lockMemberships(tx, projectId);
    const before = await memberOf(tx, projectId, userId);
    if (!before) throw new NotFoundError('member not found');
    if (before.role === 'admin' && (await countAdmins(tx, projectId)) === 1) {
      throw new ConflictError(`${before.email} is the project's last admin: make another member admin first`);
    }
    await removeMember(tx, projectId, userId);
    await recordChange(tx, { projectId, actor, action: 'member.removed', target: `user:${userId}`, before: presentMember(before) }, now);
  });
}

export function withdrawInvitation(sql: Sql, projectId: number, actor: Actor, id: number, now: Date): Promise<void> {
  return sql.begin(async (tx) => {
    if (!(await deleteInvitation(tx, projectId, id))) throw new NotFoundError('invitation not found');
    await recordChange(tx, { projectId, actor, action: 'invitation.withdrawn', target: `invitation:${id}` }, now);
  });
}

/**
 * Who follows an invitation: a person signed in (a session; with OpenID Connect, of the email the
 * provider verified), or nobody, the link alone.
 */
export type Invitee = { signedIn: { userId: string; email: string } } | { signedOut: true };

/** A followed invitation: the person joined (`made`: the link made their account), or must sign in as the invited email's account first. */
export type Acceptance = { joined: { userId: string; projectId: number; made: boolean } } | { signInAs: string };

/**
 * Follows an invitation link: the person joins its project with its role, once. The link alone
 * makes the invited email's account when there is none, and never takes one that exists (made
 * since the invitation by the command line, another invitation or the provider): its owner signs
 * in as it and follows the link again, and nothing is used meanwhile. A used or expired link is
 * refused, and so is a person signed in with another email.
 */
export function acceptInvitation(sql: Sql, token: string, invitee: Invitee, now: Date): Promise<Acceptance> {
  return sql.begin(async (tx): Promise<Acceptance> => {
    const invitation = await findInvitation(tx, token);
    if (!invitation) throw new NotFoundError('this invitation link is not one: ask for a new one');
    if (invitation.used_at !== null) throw new GoneError('this invitation has been used: sign in, or ask for a new one');
    if (invitation.expires_at <= now) throw new GoneError('this invitation has expired: ask for a new one');
    let userId: string;
    if ('signedIn' in invitee) {
      const { email } = invitee.signedIn;
      if (email.toLowerCase() !== invitation.email) {
        throw new ForbiddenError(
          `this invitation is for ${invitation.email}, and you are signed in as ${email}: sign out, sign in as ${invitation.email}, and follow the link again`,
        );
      }
      userId = invitee.signedIn.userId;
    } else {
      const made = await createUserUnlessTaken(tx, { email: invitation.email, name: invitation.email.split('@')[0] ?? invitation.email });
      if (made === null) return { signInAs: invitation.email };
      userId = made;
    }
    await addMember(tx, invitation.project_id, userId, invitation.role, now);
    await markInvitationUsed(tx, invitation.id, userId, now);
    await recordChange(
      tx,
      {
        projectId: invitation.project_id,
        actor: { kind: 'user', id: userId },
        action: 'invitation.accepted',
        target: `invitation:${invitation.id}`,
        after: { role: invitation.role },
      },
      now,
    );
    return { joined: { userId, projectId: invitation.project_id, made: !('signedIn' in invitee) } };
  });
}
