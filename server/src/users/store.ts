import { randomUUID } from 'node:crypto';
import type { Tx } from '../db.ts';
import type { ChatAccount, ScmAccount, User } from './schema.ts';

// The one module that writes `users`.

export async function createUser(sql: Tx, input: { email: string; name: string; picture: string; isAdmin?: boolean }): Promise<string> {
  const id = randomUUID();
  await sql`insert into users (id, email, name, picture, is_admin) values (${id}, ${input.email.toLowerCase()}, ${input.name}, ${input.picture}, ${input.isAdmin ?? false})`;
  return id;
}

/** The user an email names (case aside); null when none has it. */
export async function userIdOfEmail(sql: Tx, email: string): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`select id from users where lower(email) = ${email.toLowerCase()}`;
  return row?.id ?? null;
}

export async function isInstanceAdmin(sql: Tx, userId: string): Promise<boolean> {
  const [row] = await sql<{ is_admin: boolean }[]>`select is_admin from users where id = ${userId}`;
  return row?.is_admin === true;
}

/** The email of the server's first instance admin (its oldest), or null when it has none yet. */
export async function firstInstanceAdminEmail(sql: Tx): Promise<string | null> {
  const [row] = await sql<{ email: string }[]>`select email from users where is_admin order by created_at, id limit 1`;
  return row?.email ?? null;
}

/** Makes the person an instance admin when the server has none yet (the first to sign in); returns whether it did. */
export async function makeFirstInstanceAdmin(sql: Tx, userId: string): Promise<boolean> {
  const rows = await sql`
    update users set is_admin = true where id = ${userId} and not exists (select 1 from users where is_admin) returning id`;
  return rows.length > 0;
}

/** Every person of the server, with their projects: the CLI's `user list`. */
export async function listUsers(sql: Tx): Promise<{ id: string; email: string; name: string; is_admin: boolean; projects: number[] }[]> {
  return sql`
    select u.id, u.email, u.name, u.is_admin, coalesce(array_agg(m.project_id order by m.project_id) filter (where m.project_id is not null), '{}') as projects
    from users u left join memberships m on m.user_id = u.id
    group by u.id order by lower(u.email)`;
}

export async function linkAccount(sql: Tx, userId: string, link: { kind: 'chat'; account: ChatAccount } | { kind: 'scm'; account: ScmAccount }): Promise<void> {
  await sql`insert into connected_accounts (user_id, kind, account) values (${userId}, ${link.kind}, ${sql.json(link.account)})`;
}

/** A user as a member of the project sees it; a user outside the project does not exist there. */
export async function getUserInProject(sql: Tx, projectId: number, userId: string): Promise<User | null> {
  const [user] = await sql<{ id: string; email: string; name: string; picture: string }[]>`
    select u.id, u.email, u.name, u.picture
    from users u join memberships m on m.user_id = u.id
    where u.id = ${userId} and m.project_id = ${projectId}`;
  if (!user) return null;
  const accounts = await sql<{ kind: 'chat' | 'scm'; account: ChatAccount | ScmAccount }[]>`
    select kind, account from connected_accounts where user_id = ${userId} order by id`;
  return {
    ...user,
    connected_accounts: {
      chat: accounts.filter((a) => a.kind === 'chat').map((a) => a.account as ChatAccount),
      scm: accounts.filter((a) => a.kind === 'scm').map((a) => a.account as ScmAccount),
    },
  };
}

export async function userExists(sql: Tx, userId: string): Promise<boolean> {
  const [row] = await sql`select 1 from users where id = ${userId}`;
  return row !== undefined;
}

/** Who a person is, as the dashboard greets them. */
export async function getUserName(sql: Tx, userId: string): Promise<{ name: string; email: string } | null> {
  const [row] = await sql<{ name: string; email: string }[]>`select name, email from users where id = ${userId}`;
  return row ?? null;
}

/** The names of these people (their email where they gave no name), by id. */
export async function userNames(sql: Tx, userIds: string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await sql<{ id: string; name: string; email: string }[]>`select id, name, email from users where id = any(${userIds}::text[])`;
  return new Map(rows.map((row) => [row.id, row.name || row.email]));
}

/** The user an identity provider's verified email names, made when there is none (in no project). */
export async function userForEmail(sql: Tx, input: { email: string; name: string }): Promise<string> {
  const email = input.email.toLowerCase();
  const [existing] = await sql<{ id: string }[]>`select id from users where lower(email) = ${email}`;
  if (existing) return existing.id;
  const [made] = await sql<{ id: string }[]>`
    insert into users (id, email, name, picture) values (${randomUUID()}, ${email}, ${input.name}, '')
    on conflict (email) do update set email = excluded.email
    returning id`;
  return (made as { id: string }).id;
}

/**
 * A new user of this email, made only when no user has it (any case): null when one has it, or when
 * another transaction makes it at the same moment (the insert waits for that one and does
 * nothing). An invitation's link may make its person this way, never take an account made otherwise.
 */
export async function createUserUnlessTaken(sql: Tx, input: { email: string; name: string }): Promise<string | null> {
  const email = input.email.toLowerCase();
  if (await userIdOfEmail(sql, email)) return null;
  const [made] = await sql<{ id: string }[]>`
    insert into users (id, email, name, picture) values (${randomUUID()}, ${email}, ${input.name}, '')
    on conflict (email) do nothing
    returning id`;
  return made?.id ?? null;
}
