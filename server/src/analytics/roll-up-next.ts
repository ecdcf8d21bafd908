import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { afterRunRolledUp } from '../flaky/index.ts';
import { removeQueued, takeQueued } from './queue.ts';
import { rollupRun } from './rollups.ts';

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
    await removeQueued(tx, runId);
    return true;
  });
}
