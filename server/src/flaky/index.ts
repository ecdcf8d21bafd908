import type { Tx } from '../db.ts';
import { applyQuarantinePolicy } from './quarantine.ts';
import { ensureWindow, recordRunFlakiness } from './rollup-store.ts';
import { endedRun } from './store.ts';
import { WINDOW_DAYS, windowStart } from './window.ts';

export { WINDOW_DAYS, windowStart } from './window.ts';

export { rebuildFlakiness } from './rollup-store.ts';
export { flakyRoutes } from './routes.ts';
export { rankedFlakyTests } from './ranked.ts';
export { dailyFlakiness, getPolicy, keptWindowSize as flakinessWindowSize, listEvents, MIN_RUNS, recordBurnIn, runsNeeded } from './store.ts';
export type { DailyFlakiness, EventRow, FlakinessRow } from './store.ts';
export { FLAKINESS_CLASSES, type FlakinessClass, type QuarantinePolicy } from './schema.ts';

/**
 * Once a run has ended and is rolled up: its tests' flakiness, then what the quarantine policy
 * makes of it. In the rollup's transaction, under its per-project lock: the policy's decisions for
 * a project are taken one run at a time.
 */
export async function afterRunRolledUp(sql: Tx, runId: number, now: Date): Promise<void> {
  const run = await endedRun(sql, runId);
  if (!run) return;
  await ensureWindow(sql, run.project_id, windowStart(now, WINDOW_DAYS));
  await recordRunFlakiness(sql, runId);
  await applyQuarantinePolicy(sql, run, now);
}
