import { randomUUID } from 'node:crypto';
import type { Tx } from '../db.ts';
import type { NewSubscription, OwnerRoute, Subscription } from './rules-schema.ts';
import type { StoredDestination } from './store.ts';

// The one module that writes `digest_subscriptions` and `owner_routes`, and the outbox rows they
// make (`notification_deliveries` of kind digest and owners).

export interface StoredSubscription {
  id: number;
  project_id: number;
  environment_id: number;
  destination_id: number;
  period: 'day' | 'week';
  hour: number;
  weekday: number | null;
  time_zone: string;
  next_due_at: Date;
  created_at: Date;
  last_due_at: Date | null;
  last_state: 'pending' | 'delivered' | 'failed' | null;
  last_attempts: number | null;
  last_error: string | null;
}

const subscriptionColumns = (sql: Tx) => sql`
  s.id, s.project_id, s.environment_id, s.destination_id, s.period, s.hour, s.weekday, s.time_zone, s.next_due_at, s.created_at,
  last.due_at as last_due_at, last.state as last_state, last.attempts as last_attempts, last.last_error`;

const latestDelivery = (sql: Tx) => sql`
  left join lateral (
    select d.due_at, d.state, d.attempts, d.last_error from notification_deliveries d
    where d.digest_subscription_id = s.id order by d.due_at desc limit 1
  ) last on true`;

export function presentSubscription(row: StoredSubscription): Subscription {
  return {
    id: row.id,
    environment_id: row.environment_id,
    destination_id: row.destination_id,
    period: row.period,
    hour: row.hour,
    weekday: row.weekday,
    time_zone: row.time_zone,
    next_due_at: row.next_due_at.toISOString(),
    last_delivery:
      row.last_due_at === null || row.last_state === null
        ? null
        : { due_at: row.last_due_at.toISOString(), state: row.last_state, attempts: row.last_attempts ?? 0, last_error: row.last_error },
    created_at: row.created_at.toISOString(),
  };
}

export async function listSubscriptions(sql: Tx, projectId: number, limit: number, offset: number): Promise<{ rows: StoredSubscription[]; total: number }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from digest_subscriptions where project_id = ${projectId}`;
  const rows = await sql<StoredSubscription[]>`
    select ${subscriptionColumns(sql)} from digest_subscriptions s ${latestDelivery(sql)}
    where s.project_id = ${projectId} order by s.id limit ${limit} offset ${offset}`;
  return { rows, total: count?.total ?? 0 };
}

export async function getSubscription(sql: Tx, projectId: number, id: number): Promise<StoredSubscription | null> {
  const [row] = await sql<StoredSubscription[]>`
    select ${subscriptionColumns(sql)} from digest_subscriptions s ${latestDelivery(sql)} where s.project_id = ${projectId} and s.id = ${id}`;
  return row ?? null;
}

/** A new subscription, or null when the destination already has the environment's digest of that period. */
export async function createSubscription(
  sql: Tx,
  projectId: number,
  given: Omit<NewSubscription, 'weekday'> & { weekday: number | null },
  nextDueAt: Date,
  now: Date,
): Promise<number | null> {
  const [row] = await sql<{ id: number }[]>`
    insert into digest_subscriptions (project_id, environment_id, destination_id, period, hour, weekday, time_zone, next_due_at, created_at, updated_at)
    values (${projectId}, ${given.environment_id}, ${given.destination_id}, ${given.period}, ${given.hour}, ${given.weekday}, ${given.time_zone},
            ${nextDueAt}, ${now}, ${now})
    on conflict (destination_id, environment_id, period) do nothing
    returning id`;
  return row?.id ?? null;
}

export async function updateSubscription(
  sql: Tx,
  projectId: number,
  id: number,
  change: { hour: number; weekday: number | null; time_zone: string },
  nextDueAt: Date,
  now: Date,
): Promise<void> {
  await sql`
    update digest_subscriptions set hour = ${change.hour}, weekday = ${change.weekday}, time_zone = ${change.time_zone},
      next_due_at = ${nextDueAt}, updated_at = ${now}
    where project_id = ${projectId} and id = ${id}`;
}

export async function deleteSubscription(sql: Tx, projectId: number, id: number): Promise<boolean> {
  return (await sql`delete from digest_subscriptions where project_id = ${projectId} and id = ${id} returning id`).length > 0;
}

/** The project's destination `id` (type only), or null. */
export async function destinationType(sql: Tx, projectId: number, id: number): Promise<StoredDestination['type'] | null> {
  const [row] = await sql<{ type: StoredDestination['type'] }[]>`select type from notification_destinations where project_id = ${projectId} and id = ${id}`;
  return row?.type ?? null;
}

export async function environmentExists(sql: Tx, projectId: number, id: number): Promise<boolean> {
  return (await sql`select 1 from environments where project_id = ${projectId} and id = ${id}`).length > 0;
}

// The digest outbox: each subscription due makes one delivery for the moment it was due.

export interface DueSubscription {
  id: number;
  project_id: number;
  destination_id: number;
  period: 'day' | 'week';
  hour: number;
  weekday: number | null;
  time_zone: string;
}

/** Subscriptions due at `now` that no other server holds, locked until the transaction ends. */
export async function takeDueSubscriptions(sql: Tx, now: Date): Promise<DueSubscription[]> {
  return sql<DueSubscription[]>`
    select id, project_id, destination_id, period, hour, weekday, time_zone from digest_subscriptions
    where next_due_at <= ${now} order by next_due_at, id limit 100 for update skip locked`;
}

/**
 * The subscription's digest of `dueAt`, pending: once, whichever server or tick comes first (the
 * key is the subscription and the moment). Its next moment is `nextDueAt`. True when queued here.
 */
export async function queueDigest(sql: Tx, subscription: DueSubscription, dueAt: Date, nextDueAt: Date, now: Date): Promise<boolean> {
  const rows = await sql`
    insert into notification_deliveries (project_id, destination_id, kind, digest_subscription_id, due_at, event_id, state, next_attempt_at, created_at)
    values (${subscription.project_id}, ${subscription.destination_id}, 'digest', ${subscription.id}, ${dueAt}, ${randomUUID()}::uuid, 'pending', ${now}, ${now})
    on conflict (digest_subscription_id, due_at) do nothing
    returning id`;
  await sql`update digest_subscriptions set next_due_at = ${nextDueAt} where id = ${subscription.id}`;
  return rows.length > 0;
}

/** A digest due whose payload is not composed yet (a delivery's `kind`, `destination type` and moment). */
export interface DigestToCompose {
  id: number;
  digest_subscription_id: number;
  due_at: Date;
  type: StoredDestination['type'];
}

/** The next digest due without a payload; not locked: it is composed outside any transaction. */
export async function digestToCompose(sql: Tx, now: Date): Promise<DigestToCompose | null> {
  const [row] = await sql<DigestToCompose[]>`
    select d.id::int as id, d.digest_subscription_id, d.due_at, t.type from notification_deliveries d
    join notification_destinations t on t.id = d.destination_id
    where d.kind = 'digest' and d.state = 'pending' and d.payload is null and d.next_attempt_at <= ${now}
    order by d.next_attempt_at, d.id limit 1`;
  return row ?? null;
}

/** The digest's payload, kept unless another server kept one first (every attempt sends the first). */
export async function keepDigestPayload(sql: Tx, id: number, payload: string): Promise<void> {
  await sql`update notification_deliveries set payload = ${payload} where id = ${id} and payload is null`;
}

/** What composing a digest delivery needs: the subscription's environment and period, the project's name. */
export interface DigestTarget {
  project_id: number;
  project_name: string;
  environment_id: number;
  environment_name: string;
  period: 'day' | 'week';
}

export async function digestTargetOf(sql: Tx, subscriptionId: number): Promise<DigestTarget | null> {
  const [row] = await sql<DigestTarget[]>`
    select s.project_id, p.name as project_name, s.environment_id, e.name as environment_name, s.period
    from digest_subscriptions s join projects p on p.id = s.project_id join environments e on e.id = s.environment_id
    where s.id = ${subscriptionId}`;
  return row ?? null;
}

// Owners' routing rules.

export async function listOwnerRoutes(sql: Tx, projectId: number, limit: number, offset: number): Promise<{ rows: OwnerRoute[]; total: number }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from owner_routes where project_id = ${projectId}`;
  const rows = await sql<(Omit<OwnerRoute, 'created_at'> & { created_at: Date })[]>`
    select id, owner, destination_id, created_at from owner_routes where project_id = ${projectId} order by id limit ${limit} offset ${offset}`;
  return { rows: rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() })), total: count?.total ?? 0 };
}

/** A new rule, or null when the same owner already routes to that destination. */
export async function createOwnerRoute(sql: Tx, projectId: number, owner: string, destinationId: number, now: Date): Promise<OwnerRoute | null> {
  const [row] = await sql<(Omit<OwnerRoute, 'created_at'> & { created_at: Date })[]>`
    insert into owner_routes (project_id, owner, destination_id, created_at) values (${projectId}, ${owner}, ${destinationId}, ${now})
    on conflict (project_id, owner, destination_id) do nothing
    returning id, owner, destination_id, created_at`;
  return row ? { ...row, created_at: row.created_at.toISOString() } : null;
}

export async function deleteOwnerRoute(sql: Tx, projectId: number, id: number): Promise<OwnerRoute | null> {
  const [row] = await sql<(Omit<OwnerRoute, 'created_at'> & { created_at: Date })[]>`
    delete from owner_routes where project_id = ${projectId} and id = ${id} returning id, owner, destination_id, created_at`;
  return row ? { ...row, created_at: row.created_at.toISOString() } : null;
}

/** The project's rules, each with its destination's environments (a rule tells only what its destination hears). */
export async function ownerRoutesToTell(sql: Tx, projectId: number): Promise<{ owner: string; destination_id: number; environments: string[] }[]> {
  return sql<{ owner: string; destination_id: number; environments: string[] }[]>`
    select r.owner, r.destination_id, d.environments from owner_routes r join notification_destinations d on d.id = r.destination_id
    where r.project_id = ${projectId} order by r.id`;
}

/** The owners of the run's tests that failed (not flaky, not snoozed): what owners' rules route. */
export async function ownersOfFailures(sql: Tx, projectId: number, runId: number): Promise<string[][]> {
  const rows = await sql<{ owners: string[] }[]>`
    select tc.owners from test_results t join test_cases tc on tc.project_id = ${projectId} and tc.id = t.test_case_id
    where t.test_run_id = ${runId} and t.is_final and t.outcome = 'failed' and not t.snoozed and cardinality(tc.owners) > 0`;
  return rows.map((row) => row.owners);
}

/** One pending delivery of the run's failures per destination, with the owners routed to it; once per run and destination. */
export async function queueOwnerDeliveries(sql: Tx, run: { id: number; project_id: number }, routed: Map<number, string[]>, now: Date): Promise<void> {
  for (const [destinationId, owners] of routed) {
    await sql`
      insert into notification_deliveries (project_id, destination_id, test_run_id, kind, owners, event_id, state, next_attempt_at, created_at)
      values (${run.project_id}, ${destinationId}, ${run.id}, 'owners', ${owners}, ${randomUUID()}::uuid, 'pending', ${now}, ${now})
      on conflict (destination_id, test_run_id, kind) do nothing`;
  }
}
