import { DAY_MS } from '../context.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { Tx } from '../db.ts';

// The one module that writes `sessions` and `login_links`. Secrets are random, handed out once and
// stored only as their sha256.

export const SESSION_DAYS = 14;
export const LOGIN_LINK_MINUTES = 15;

function hash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}

export interface Session {
  userId: string;
  csrfToken: string;
  expiresAt: Date;
}

/** A new session for the user: its cookie value (the secret) and its CSRF token. */
export async function createSession(sql: Tx, userId: string, now: Date): Promise<{ cookie: string; session: Session }> {
  const cookie = secret();
  const session = { userId, csrfToken: secret(), expiresAt: new Date(now.getTime() + SESSION_DAYS * DAY_MS) };
  await sql`
    insert into sessions (id_hash, user_id, csrf_token, created_at, expires_at)
    values (${hash(cookie)}, ${userId}, ${session.csrfToken}, ${now}, ${session.expiresAt})`;
  return { cookie, session };
}

/** The live session a cookie names; null for an unknown or expired one. */
export async function findSession(sql: Tx, cookie: string, now: Date): Promise<Session | null> {
  const [row] = await sql<{ user_id: string; csrf_token: string; expires_at: Date }[]>`
    select user_id, csrf_token, expires_at from sessions where id_hash = ${hash(cookie)} and expires_at > ${now}`;
  return row ? { userId: row.user_id, csrfToken: row.csrf_token, expiresAt: row.expires_at } : null;
}

export async function deleteSession(sql: Tx, cookie: string): Promise<void> {
  await sql`delete from sessions where id_hash = ${hash(cookie)}`;
}

/** A one-time sign-in link's token for the user, valid LOGIN_LINK_MINUTES. */
export async function createLoginLink(sql: Tx, userId: string, now: Date): Promise<string> {
  const token = secret();
  await sql`
    insert into login_links (token_hash, user_id, created_at, expires_at)
    values (${hash(token)}, ${userId}, ${now}, ${new Date(now.getTime() + LOGIN_LINK_MINUTES * 60_000)})`;
  return token;
}

/** Uses a sign-in link: its user, once; null when it is unknown, used or expired. */
export async function consumeLoginLink(sql: Tx, token: string, now: Date): Promise<string | null> {
  const [row] = await sql<{ user_id: string }[]>`
    update login_links set used_at = ${now}
    where token_hash = ${hash(token)} and used_at is null and expires_at > ${now}
    returning user_id`;
  return row?.user_id ?? null;
}
