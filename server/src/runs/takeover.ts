import type { Sql } from '../db.ts';
import { failRun } from './finish.ts';
import { lostRuns, requeueRun } from './record.ts';
import { dropUnfinishedAttempts } from './results.ts';
import { forgetShards, unfinishedTests } from './shards-store.ts';

// A run whose executor stopped beating (its server was killed, or cut off) goes to another
// executor, on this server or another one sharing the database, which runs the tests the lost one
// left without a final result: the results already stored stay, each test ends with the attempts
// of one execution, and none is stored twice. After `takeovers` hand-overs, or when nothing is left
// to run but the shards' ends, the run ends as `error` as before (docs/decisions/run-takeover.md).

export interface LostRunsHandled {
  /** Handed to another executor. */
  handedOver: number[];
  /** Ended as `error`. */
  ended: number[];
}

const LOST = 'the executor running this run was lost (its server stopped or died)';

export async function handOverLostRuns(sql: Sql, now: Date, staleMs: number, takeovers: number): Promise<LostRunsHandled> {
  const handled: LostRunsHandled = { handedOver: [], ended: [] };
  for (const run of await lostRuns(sql, now, staleMs)) {
    const outcome =
      run.executions > takeovers
        ? 'end'
        : await sql.begin(async (tx) => {
            const { listed, unfinished } = await unfinishedTests(tx, run.id);
            // Every listed test has its result: only the shards' ends are missing.
            if (listed > 0 && unfinished.length === 0) return 'end';
            // The hand-over holds the run's row to its commit: another sweeper finds it pending, or ended.
            if (!(await requeueRun(tx, run.id, run.claimed_by, listed > 0 ? unfinished : null))) return 'taken';
            await dropUnfinishedAttempts(tx, run.id);
            await forgetShards(tx, run.id);
            return 'handed';
          });
    if (outcome === 'handed') handled.handedOver.push(run.id);
    if (outcome === 'end' && (await failRun(sql, run.id, LOST, now))) handled.ended.push(run.id);
  }
  return handled;
}
