import type { Tx } from '../db.ts';
import { enqueueOwnerRoutes } from './routing.ts';
import { destinationsToTell, type EndedRun, endedRunToTell, previousState, queueDeliveries } from './store.ts';

// Which destinations a run's ending is told to: the outbox's rules. Its rows are the store's.

/** States a run of the suite ends in: a cancel says nothing of the suite, and no change is read from it. */
const SUITE_STATES = ['passed', 'failed', 'error'];

/**
 * Queues the run's notifications, in the transaction that ends it: one delivery per destination
 * whose environments and `when` take this ending. Nothing when the trigger said
 * `send_notifications: false`. Then the deliveries owners' rules route its failures to. Returns
 * how many were queued.
 */
export async function enqueueNotifications(sql: Tx, runId: number, now: Date): Promise<number> {
  const run = await endedRunToTell(sql, runId);
  if (!run || !run.send_notifications) return 0;
  return (await enqueueEndings(sql, run, now)) + (await enqueueOwnerRoutes(sql, run, now));
}

async function enqueueEndings(sql: Tx, run: EndedRun, now: Date): Promise<number> {
  const destinations = await destinationsToTell(sql, run.project_id);
  const inScope = destinations.filter((d) => d.environments.length === 0 || d.environments.includes(run.environment_slug));
  if (inScope.length === 0) return 0;
  const previous = inScope.some((d) => d.when === 'changed') ? await previousState(sql, run, SUITE_STATES) : null;
  const told = inScope.filter((d) => {
    if (d.when === 'always') return true;
    if (d.when === 'failed') return run.state === 'failed' || run.state === 'error';
    return SUITE_STATES.includes(run.state) && previous !== run.state;
  });
  if (told.length === 0) return 0;
  await queueDeliveries(
    sql,
    run,
    told.map((d) => d.id),
    now,
  );
  return told.length;
}
