import { retryingConflicts, type Sql } from '../db.ts';
import { finishRun } from './finish.ts';
import { failureLimitReached, unsnoozedFailures } from './store.ts';

// Fail fast (issue 56): a run made with `max_failures` (a trigger's, a reporter's, or its
// environment's) stops once that many of its tests have failed that no snooze or quarantine
// covers. It is cancelled like any run, so its agents (their token refused, their heartbeat
// answered with the end) and the executor's shards stop within seconds, and the reporter's next
// request is told the run ended; its reason names the failures that stopped it.

/** Who a run stopped by its failures was cancelled by. */
export const STOPPED_BY_FAILURES = 'max_failures';

/** How many of the failures a reason names; the rest are counted. */
const NAMED = 10;

/** Stops a run at its failure limit: see `failFast`. */
export type StopAtFailureLimit = (runId: number, maxFailures: number, now: Date) => Promise<boolean>;

/**
 * After a batch with failures is committed into a run that has a limit, `maxFailures`: the run is
 * cancelled if its failures reached it. True when this call stopped it (a batch beside it may
 * have, first). The limit is read from the run's row by the results' write, which locks it anyway
 * (a run's limit is set when it is made and never after): a run without one is never asked about,
 * and no process keeps a memory of runs.
 */
export function failFast(sql: Sql): StopAtFailureLimit {
  return async (runId, maxFailures, now) => {
    const failing = await failureLimitReached(sql, runId, maxFailures);
    if (failing === null) return false;
    const failures = await unsnoozedFailures(sql, runId, NAMED);
    const named = failures.map((failure) => failure.title).join('; ');
    const more = failing > failures.length ? `; and ${failing - failures.length} more` : '';
    const reason = `stopped after ${failing} failed test${failing === 1 ? '' : 's'} (max_failures ${maxFailures}): ${named}${more}`;
    return retryingConflicts(() => sql.begin((tx) => finishRun(tx, runId, { kind: 'cancelled', reason, by: STOPPED_BY_FAILURES }, now)));
  };
}
