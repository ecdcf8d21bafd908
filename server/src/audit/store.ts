import { escapeLike, type Sql, type Tx } from '../db.ts';
import type { Scope } from '../principals.ts';
import type { AuditEvent, AuditQuery } from './schema.ts';

// The one module that writes `audit_events`: every change of access or configuration, written in
// the transaction of the change itself, so that a change and its event stand or fall together.

/**
 * Who made a change: a person, a key (a machine), the server itself (a policy at work), or the
 * operating system's user who ran a `proctor` command on the server's machine.
 */
export type Actor = { kind: 'user'; id: string } | { kind: 'key'; id: string } | { kind: 'system'; name: string } | { kind: 'cli'; user: string };

/** The actor behind a request's scope. */
export function actorOf(scope: Scope): Actor {
  const { principal } = scope;
  if (principal.kind === 'user') return { kind: 'user', id: principal.userId };
  return { kind: 'key', id: principal.keyId };
}

export interface Change {
  projectId: number | null;
  actor: Actor;
  /** What was done, `<object>.<verb>`: `member.role_changed`. */
  action: string;
  /** What it was done to, `<kind>:<id>`. */
  target: string;
  /** The object before and after, as the API shows it: never a secret. */
  before?: unknown;
  after?: unknown;
}

/** Records a change in the transaction `sql` makes it in. */
export async function recordChange(sql: Tx, change: Change, now: Date): Promise<void> {
  const { actor } = change;
  const actorId = actor.kind === 'system' ? null : actor.kind === 'cli' ? actor.user : actor.id;
  const name =
    actor.kind === 'user'
      ? sql`coalesce((select name from users where id = ${actor.id}), ${actor.id})`
      : actor.kind === 'key'
        ? sql`${`key ${actor.id}`}::text`
        : actor.kind === 'cli'
          ? sql`${`${actor.user} (command line)`}::text`
          : sql`${actor.name}::text`;
  await sql`
    insert into audit_events (project_id, at, actor_kind, actor_id, actor_name, action, target, before, after)
    values (${change.projectId}, ${now}, ${actor.kind}, ${actorId}, ${name}, ${change.action}, ${change.target},
            ${change.before === undefined ? null : sql.json(change.before as never)}, ${change.after === undefined ? null : sql.json(change.after as never)})`;
}

/** What a change says of itself; the project and the actor come from the request. */
export type Described = Omit<Change, 'projectId' | 'actor'>;

/**
 * Makes a change and records it in one transaction: `work` answers its result and what it
 * changed (null when nothing was: no event).
 */
export async function audited<T>(sql: Sql, scope: Scope, now: Date, work: (tx: Tx) => Promise<[T, Described | null]>): Promise<T> {
  const done = await sql.begin(async (tx) => {
    const [result, change] = await work(tx);
    if (change) await recordChange(tx, { ...change, projectId: scope.projectId, actor: actorOf(scope) }, now);
    return { result };
  });
  return done.result as T;
}

interface EventRow {
  id: string;
  at: Date;
  actor_kind: 'user' | 'key' | 'system' | 'cli';
  actor_id: string | null;
  actor_name: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

/** A project's events, newest first, filtered by action, actor and date. */
export async function listChanges(
  sql: Tx,
  projectId: number,
  query: AuditQuery,
  limit: number,
  offset: number,
): Promise<{ events: AuditEvent[]; total: number }> {
  const where = sql`project_id = ${projectId}
    and (${query.action ?? null}::text is null or action = ${query.action ?? null} or action like ${`${escapeLike(query.action ?? '')}.%`})
    and (${query.actor ?? null}::text is null or actor_id = ${query.actor ?? null})
    and (${query.since ?? null}::timestamptz is null or at >= ${query.since ?? null})
    and (${query.until ?? null}::timestamptz is null or at < ${query.until ?? null})`;
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from audit_events where ${where}`;
  const rows = await sql<EventRow[]>`
    select id::text as id, at, actor_kind, actor_id, actor_name, action, target, before, after
    from audit_events where ${where} order by at desc, id desc limit ${limit} offset ${offset}`;
  return {
    total: count?.n ?? 0,
    events: rows.map((row) => ({
      id: Number(row.id),
      at: row.at.toISOString(),
      actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name },
      action: row.action,
      target: row.target,
      before: row.before ?? null,
      after: row.after ?? null,
    })),
  };
}

/** Deletes a project's events older than `before`; the retention pass keeps a year at least. */
export async function deleteChangesBefore(sql: Tx, projectId: number, before: Date): Promise<number> {
  const rows = await sql`delete from audit_events where project_id = ${projectId} and at < ${before} returning id`;
  return rows.length;
}
