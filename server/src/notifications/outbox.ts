import { randomUUID } from 'node:crypto';
import type { Tx } from '../db.ts';
import { destinationColumns, type StoredDestination } from './store.ts';

// The one module that writes `notification_deliveries`: the outbox of run endings to tell.

interface EndedRun {
  id: number;
  project_id: number;
  environment_id: number;
  environment_slug: string;
  state: string;
  test_run_branch: string | null;
  send_notifications: boolean;
}

/** States a run of the suite ends in: a cancel says nothing of the suite, and no change is read from it. */
const SUITE_STATES = ['passed', 'failed', 'error'];

/**
 * Queues the run's notifications, in the transaction that ends it: one delivery per destination
 * whose environments and `when` take this ending. Nothing when the trigger said
 * `send_notifications: false`. Returns how many were queued.
 */
export async function enqueueNotifications(sql: Tx, runId: number, now: Date): Promise<number> {
  const [run] = await sql<EndedRun[]>`
    select r.id, r.project_id, r.environment_id, e.slug as environment_slug, r.state, r.test_run_branch, r.send_notifications
    from test_runs r join environments e on e.id = r.environment_id where r.id = ${runId}`;
  if (!run || !run.send_notifications) return 0;
  const destinations = await sql<Pick<StoredDestination, 'id' | 'environments' | 'when'>[]>`
    select id, environments, "when" from notification_destinations where project_id = ${run.project_id} order by id`;
  const inScope = destinations.filter((d) => d.environments.length === 0 || d.environments.includes(run.environment_slug));
  if (inScope.length === 0) return 0;
  const previous = inScope.some((d) => d.when === 'changed') ? await previousState(sql, run) : null;
  const told = inScope.filter((d) => {
    if (d.when === 'always') return true;
    if (d.when === 'failed') return run.state === 'failed' || run.state === 'error';
    return SUITE_STATES.includes(run.state) && previous !== run.state;
  });
  if (told.length === 0) return 0;
  await sql`
    insert into notification_deliveries (project_id, destination_id, test_run_id, event_id, state, next_attempt_at, created_at)
    select ${run.project_id}, destination_id, ${run.id}, event_id::uuid, 'pending', ${now}, ${now}
    from unnest(${told.map((d) => d.id)}::int[], ${told.map(() => randomUUID())}::text[]) as t (destination_id, event_id)
    on conflict (destination_id, test_run_id) do nothing`;
  return told.length;
}

/** The state the previous run of the environment and branch ended in (a cancelled one skipped); null for the first. */
async function previousState(sql: Tx, run: EndedRun): Promise<string | null> {
  const [row] = await sql<{ state: string }[]>`
    select state from test_runs
    where environment_id = ${run.environment_id} and test_run_branch is not distinct from ${run.test_run_branch}
      and id < ${run.id} and state in ${sql(SUITE_STATES)}
    order by id desc limit 1`;
  return row?.state ?? null;
}

export interface DueDelivery {
  id: number;
  event_id: string;
  test_run_id: number;
  attempts: number;
  /** The JSON body, once composed. */
  payload: string | null;
  /** Steps of a several-step delivery that went through at an earlier attempt. */
  steps_done: string[];
  created_at: Date;
  destination: StoredDestination;
}

/** The next delivery due that no other process holds, with its destination, locked until the transaction ends. */
export async function takeDue(sql: Tx, now: Date): Promise<DueDelivery | null> {
  const [row] = await sql<(Omit<DueDelivery, 'destination'> & { destination: StoredDestination })[]>`
    select d.id::int as id, d.event_id::text as event_id, d.test_run_id, d.attempts, d.payload, d.steps_done, d.created_at,
           to_jsonb(t) as destination
    from notification_deliveries d
    join lateral (select ${destinationColumns(sql)} from notification_destinations where id = d.destination_id) t on true
    where d.state = 'pending' and d.next_attempt_at <= ${now}
    order by d.next_attempt_at, d.id limit 1 for update of d skip locked`;
  if (!row) return null;
  return { ...row, destination: { ...row.destination, created_at: new Date(row.destination.created_at) } };
}

export async function keepPayload(sql: Tx, id: number, payload: string): Promise<void> {
  await sql`update notification_deliveries set payload = ${payload} where id = ${id}`;
}

/** A step of the delivery went through; kept with the attempt's outcome, in its transaction. */
export async function markStepDone(sql: Tx, id: number, step: string): Promise<void> {
  await sql`update notification_deliveries set steps_done = array_append(steps_done, ${step}::text) where id = ${id} and not ${step}::text = any(steps_done)`;
}

export async function markDelivered(sql: Tx, id: number, now: Date): Promise<void> {
  await sql`update notification_deliveries set state = 'delivered', attempts = attempts + 1, last_error = null, delivered_at = ${now} where id = ${id}`;
}

/** An attempt failed: tried again at `retryAt`, or given up on (failed) when that is null. */
export async function markAttemptFailed(sql: Tx, id: number, error: string, retryAt: Date | null): Promise<void> {
  await sql`
    update notification_deliveries set attempts = attempts + 1, last_error = ${error},
      state = ${retryAt === null ? 'failed' : 'pending'}, next_attempt_at = coalesce(${retryAt}, next_attempt_at)
    where id = ${id}`;
}
