import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { recordDurationShifts } from '../durations/index.ts';
import { afterRunRolledUp, rebuildFlakiness } from '../flaky/index.ts';
import { dropQueuedForRebuild, lastDeletedDay, removeQueued, replaceRollups, rollupRun, takeQueued } from './rollups-store.ts';

// The rollups' two jobs: a run added once it has ended (rollUpNext, by the job that empties the
// rollup queue), and a project's rebuilt from its results (rebuildRollups). Their SQL is in
// rollups-store.ts.

/**
 * Rolls up the oldest waiting run (its flakiness too, and what the quarantine policy makes of it) that no other process has taken and removes it from the queue,
 * in one transaction: a crash in between leaves it waiting, never counted twice. Returns false
 * when none waits.
 */
export function rollUpNext(sql: Sql, clock: Clock): Promise<boolean> {
  return sql.begin(async (tx) => {
    const runId = await takeQueued(tx);
    if (runId === null) return false;
    await rollupRun(tx, runId);
    await afterRunRolledUp(tx, runId, clock());
    await recordDurationShifts(tx, runId, clock());
    await removeQueued(tx, runId);
    return true;
  });
}

/**
 * Rebuilds a project's rollups and flakiness from its runs and raw results: the rows `rollupRun`
 * leaves run by run (test/analytics/analytics.test.ts holds the two equal). One transaction: the
 * project's waiting runs of those days leave the queue, and its rows are replaced as one. Days up
 * to the last one with a run whose results the retention policy deleted keep their rows: they can
 * no longer be counted again, and the days after start from them.
 */
export function rebuildRollups(sql: Sql, projectId: number): Promise<void> {
  return sql.begin(async (tx) => {
    const horizon = await lastDeletedDay(tx, projectId);
    // The queue's lock first, then the rollup tables': as a run's end and its rollup take them.
    await dropQueuedForRebuild(tx, projectId, horizon);
    await replaceRollups(tx, projectId, horizon);
    await rebuildFlakiness(tx, projectId, horizon);
  });
}
