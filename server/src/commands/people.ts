// `proctor user …` and `proctor member …`: people and their projects, by email as people know
// them, with every link on the public URL of the server that holds the data.
import { recordChange } from '../audit/store.ts';
import { NotFoundError } from '../errors.ts';
import { loadConfig } from '../config.ts';
import type { Sql } from '../db.ts';
import type { Mail, Mailer } from '../mail/index.ts';
import type { z } from 'zod';
import { type Added, addPerson, presentMember, removePerson } from '../members/service.ts';
import { ROLES, type Role } from '../principals.ts';
import { getProject, listMembers } from '../projects/store.ts';
import { createLoginLink, LOGIN_LINK_MINUTES } from '../sessions/store.ts';
import { recordedPublicUrl } from '../system/store.ts';
import { chatAccountSchema, newUserSchema, scmAccountSchema } from '../users/schema.ts';
import { createUser, getUserName, linkAccount, listUsers, userExists, userIdOfEmail } from '../users/store.ts';
import { commandLineActor, type Flags, projectIdFlag, required, UsageError } from './usage.ts';

function parseJsonFlag<S extends z.ZodType>(schema: S, raw: string, flag: string): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new UsageError(`--${flag} must be JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(`--${flag}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
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

/**
 * The server's mail sender when PROCTOR_SMTP_URL is set (server/src/mail/), else null. It and the
 * mails' modules load only then: a command that mails nothing loads no SMTP library.
 */
async function commandMailer(): Promise<Mailer | null> {
  const settings = loadConfig().mail;
  if (!settings) return null;
  const [{ createMailer }, { createLogger }] = await Promise.all([import('../mail/index.ts'), import('../logger.ts')]);
  // The command sends and says the outcome itself: nothing is logged.
  return createMailer(settings, createLogger('silent'));
}

/**
 * Sends a mail now, as the server's routes do after their answer, and says so; a mail the SMTP
 * server did not take is said with its reason, and the link is printed to pass on instead.
 */
async function mailed(mailer: Mailer, mail: Mail, what: string, link: string): Promise<string> {
  const to = mail.to.join(', ');
  try {
    await mailer.send(mail);
    return `mailed ${what} to ${to} (through ${mailer.server})`;
  } catch (error) {
    // The link is made either way: the command's work is done, and the person gets it from its operator.
    return `${what} not mailed to ${to}: ${mailer.server} did not take it (${(error as Error).message}); pass this link on yourself:\n${link}`;
  }
}

/** The user `--user ID` or `--email E` names, checked to exist. */
async function userFlag(sql: Sql, flags: Flags): Promise<string> {
  if (typeof flags.email === 'string') {
    const id = await userIdOfEmail(sql, flags.email);
    // The command line is right; the person is missing: one line, not the usage.
    if (!id) throw new NotFoundError(`no user with the email ${flags.email} (npx proctor user list shows them)`);
    return id;
  }
  const id = required(flags, 'user');
  if (!(await userExists(sql, id))) throw new NotFoundError(`no user ${id} (npx proctor user list shows them)`);
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
      const isAdmin = flags.admin === true;
      // A person is no project's: the event is the instance's (no project), as a personal key's.
      return sql.begin(async (tx) => {
        const id = await createUser(tx, { ...parsed.data, isAdmin });
        const after = { id, email: parsed.data.email.toLowerCase(), name: parsed.data.name, is_admin: isAdmin };
        await recordChange(tx, { projectId: null, actor: commandLineActor(), action: 'user.created', target: `user:${id}`, after }, new Date());
        return id;
      });
    }
    case 'user link': {
      const userId = required(flags, 'user');
      if (!(await userExists(sql, userId))) throw new UsageError(`no user ${userId}`);
      const account =
        typeof flags.chat === 'string'
          ? { kind: 'chat' as const, account: parseJsonFlag(chatAccountSchema, flags.chat, 'chat') }
          : typeof flags.scm === 'string'
            ? { kind: 'scm' as const, account: parseJsonFlag(scmAccountSchema, flags.scm, 'scm') }
            : null;
      if (!account) throw new UsageError('give --chat JSON or --scm JSON');
      await sql.begin(async (tx) => {
        await linkAccount(tx, userId, account);
        const after = { [account.kind]: account.account };
        await recordChange(tx, { projectId: null, actor: commandLineActor(), action: 'user.account_linked', target: `user:${userId}`, after }, new Date());
      });
      return 'ok';
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
      const link = `${await publicUrlOf(sql)}/sign-in/link?token=${await createLoginLink(sql, userId, new Date())}`;
      const mailer = await commandMailer();
      if (!mailer) return link;
      const { email } = (await getUserName(sql, userId)) as { email: string };
      const { signInMail } = await import('../dashboard/signin-mail.ts');
      return mailed(mailer, signInMail(email, link), `a sign-in link (one use, within ${LOGIN_LINK_MINUTES} minutes)`, link);
    }
    case 'member add': {
      const projectId = await projectFlag(sql, flags);
      const role = roleFlag(flags);
      if (typeof flags.email === 'string') {
        const mailer = await commandMailer();
        const added: Added = await addPerson(
          sql,
          projectId,
          commandLineActor(),
          { email: flags.email, role },
          { days: loadConfig().inviteDays, publicUrl: await publicUrlOf(sql), mailed: mailer !== null },
          new Date(),
        );
        if (!added.invitation) return 'ok';
        if (!mailer) return `invited: ${added.invitation.url}`;
        const [{ invitationMail }, project] = await Promise.all([import('../members/mail.ts'), getProject(sql, projectId)]);
        const mail = invitationMail(added.invitation, project?.name ?? `project ${projectId}`);
        return `invited: ${await mailed(mailer, mail, 'the invitation', added.invitation.url)}`;
      }
      const userId = await userFlag(sql, flags);
      const { email } = (await getUserName(sql, userId)) as { email: string };
      await addPerson(sql, projectId, commandLineActor(), { email, role }, { days: loadConfig().inviteDays, publicUrl: await publicUrlOf(sql) }, new Date());
      return 'ok';
    }
    case 'member list': {
      const members = (await listMembers(sql, await projectFlag(sql, flags))).map(presentMember);
      return table([['user_id', 'email', 'name', 'role', 'joined'], ...members.map((m) => [m.user_id, m.email, m.name, m.role, m.joined_at])]);
    }
    case 'member remove': {
      const projectId = await projectFlag(sql, flags);
      await removePerson(sql, projectId, commandLineActor(), await userFlag(sql, flags), new Date());
      return 'ok';
    }
    default:
      return null;
  }
}

export const LOGIN_LINK_HINT = `a one-time link, valid ${LOGIN_LINK_MINUTES} minutes`;
