// `proctor user …` and `proctor member …`: people and their projects, by email as people know
// them, with every link on the public URL of the server that holds the data.
import type { Actor } from '../audit/index.ts';
import { loadConfig } from '../config.ts';
import type { Sql } from '../db.ts';
import { type Added, addPerson, presentMember, removePerson } from '../members/service.ts';
import { ROLES, type Role } from '../principals.ts';
import { getProject, listMembers } from '../projects/store.ts';
import { createLoginLink, LOGIN_LINK_MINUTES } from '../sessions/store.ts';
import { recordedPublicUrl } from '../system/store.ts';
import { newUserSchema } from '../users/schema.ts';
import { createUser, listUsers, userExists, userIdOfEmail } from '../users/store.ts';

/** A command line that cannot be run as given: said in one line, with the usage. */
export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>;

/** The command line acts as itself in the audit trail. */
const COMMAND_LINE: Actor = { kind: 'system', name: 'proctor command line' };

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function projectIdFlag(flags: Flags): number {
  const id = Number(required(flags, 'project'));
  if (!Number.isInteger(id) || id < 1) throw new UsageError('--project must be a project id (a positive integer)');
  return id;
}

function roleFlag(flags: Flags): Role {
  const role = (flags.role as string | undefined) ?? 'member';
  if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  return role as Role;
}

/** The public URL the running server recorded at its start; before any start, the configured one. */
export async function publicUrlOf(sql: Sql): Promise<string> {
  return (await recordedPublicUrl(sql)) ?? loadConfig().publicUrl;
}

/** The user `--user ID` or `--email E` names, checked to exist. */
async function userFlag(sql: Sql, flags: Flags): Promise<string> {
  if (typeof flags.email === 'string') {
    const id = await userIdOfEmail(sql, flags.email);
    if (!id) throw new UsageError(`no user with the email ${flags.email} (proctor user list shows them)`);
    return id;
  }
  const id = required(flags, 'user');
  if (!(await userExists(sql, id))) throw new UsageError(`no user ${id} (proctor user list shows them)`);
  return id;
}

async function projectFlag(sql: Sql, flags: Flags): Promise<number> {
  const projectId = projectIdFlag(flags);
  if (!(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
  return projectId;
}

function table(rows: string[][]): string {
  return rows.map((row) => row.join('\t')).join('\n');
}

/** Runs a people command; null when `command` is not one. */
export async function peopleCommand(sql: Sql, command: string, flags: Flags): Promise<string | null> {
  switch (command) {
    case 'user create': {
      const parsed = newUserSchema.safeParse({ email: flags.email, name: flags.name });
      if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; '));
      if (await userIdOfEmail(sql, parsed.data.email)) throw new UsageError(`a user with the email ${parsed.data.email} exists already`);
      return createUser(sql, { ...parsed.data, isAdmin: flags.admin === true });
    }
    case 'user list': {
      const users = await listUsers(sql);
      return table([
        ['id', 'email', 'name', 'admin', 'projects'],
        ...users.map((u) => [u.id, u.email, u.name, u.is_admin ? 'yes' : 'no', u.projects.join(',') || '-']),
      ]);
    }
    case 'user login-link': {
      const userId = await userFlag(sql, flags);
      return `${await publicUrlOf(sql)}/sign-in/link?token=${await createLoginLink(sql, userId, new Date())}`;
    }
    case 'member add': {
      const projectId = await projectFlag(sql, flags);
      const role = roleFlag(flags);
      if (typeof flags.email === 'string') {
        const added: Added = await addPerson(
          sql,
          projectId,
          COMMAND_LINE,
          { email: flags.email, role },
          { days: loadConfig().inviteDays, publicUrl: await publicUrlOf(sql) },
          new Date(),
        );
        return added.invitation ? `invited: ${added.invitation.url}` : 'ok';
      }
      const userId = await userFlag(sql, flags);
      const { email } = (await listUsers(sql)).find((user) => user.id === userId) as { email: string };
      await addPerson(sql, projectId, COMMAND_LINE, { email, role }, { days: loadConfig().inviteDays, publicUrl: await publicUrlOf(sql) }, new Date());
      return 'ok';
    }
    case 'member list': {
      const members = (await listMembers(sql, await projectFlag(sql, flags))).map(presentMember);
      return table([['user_id', 'email', 'name', 'role', 'joined'], ...members.map((m) => [m.user_id, m.email, m.name, m.role, m.joined_at])]);
    }
    case 'member remove': {
      const projectId = await projectFlag(sql, flags);
      await removePerson(sql, projectId, COMMAND_LINE, await userFlag(sql, flags), new Date());
      return 'ok';
    }
    default:
      return null;
  }
}

export const LOGIN_LINK_HINT = `a one-time link, valid ${LOGIN_LINK_MINUTES} minutes`;
