import { createHash, randomBytes } from 'node:crypto';
import { DAY_MS } from '../context.ts';
import type { Tx } from '../db.ts';
import type { Role } from '../principals.ts';
import type { InvitationView } from './schema.ts';

// The one module that writes `invitations`: an email asked into a project with a role, by a
// one-time link whose hash alone is kept.

function hashOf(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export interface Invitation {
  id: number;
  project_id: number;
  email: string;
  role: Role;
  expires_at: Date;
  used_at: Date | null;
}

/** A new invitation and its token, which exists only in this answer. */
export async function createInvitation(
  sql: Tx,
  input: { projectId: number; email: string; role: Role; createdBy: string | null; now: Date; days: number },
): Promise<{ invitation: InvitationView; token: string }> {
  const token = randomBytes(24).toString('base64url');
  const expires = new Date(input.now.getTime() + input.days * DAY_MS);
  const [row] = await sql<{ id: number }[]>`
    insert into invitations (project_id, email, role, token_hash, created_by, created_at, expires_at)
    values (${input.projectId}, ${input.email.toLowerCase()}, ${input.role}, ${hashOf(token)}, ${input.createdBy}, ${input.now}, ${expires})
    returning id`;
  const [view] = await pendingInvitations(sql, input.projectId, input.now, (row as { id: number }).id);
  return { invitation: view as InvitationView, token };
}

/** A project's invitations not used and not expired, oldest first; one when `id` is given. */
export async function pendingInvitations(sql: Tx, projectId: number, now: Date, id: number | null = null): Promise<InvitationView[]> {
  const rows = await sql<{ id: number; email: string; role: Role; created_by: string | null; created_at: Date; expires_at: Date }[]>`
    select i.id, i.email, i.role, u.name as created_by, i.created_at, i.expires_at
    from invitations i left join users u on u.id = i.created_by
    where i.project_id = ${projectId} and i.used_at is null and i.expires_at > ${now} and (${id}::int is null or i.id = ${id})
    order by i.created_at, i.id`;
  return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString(), expires_at: row.expires_at.toISOString() }));
}

/** The invitation a token is, locked until the transaction ends; null when it is none. */
export async function findInvitation(sql: Tx, token: string): Promise<Invitation | null> {
  const [row] = await sql<Invitation[]>`
    select id, project_id, email, role, expires_at, used_at from invitations where token_hash = ${hashOf(token)} for update`;
  return row ?? null;
}

export async function markInvitationUsed(sql: Tx, id: number, userId: string, now: Date): Promise<void> {
  await sql`update invitations set used_at = ${now}, used_by = ${userId} where id = ${id}`;
}

/** Withdraws a pending invitation; false when the project has none such. */
export async function deleteInvitation(sql: Tx, projectId: number, id: number): Promise<boolean> {
  const rows = await sql`delete from invitations where project_id = ${projectId} and id = ${id} and used_at is null returning id`;
  return rows.length > 0;
}
