import type { Logger } from 'pino';
import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { completeRun } from './complete.ts';

/**
 * Runs whose shards went silent (a reporter's process died without its end) are finished as
 * `error` once nothing arrived for `timeoutMs`. Returns the ids it finished.
 */
export async function finishSilentRuns(sql: Sql, now: Date, timeoutMs: number): Promise<number[]> {
  const cutoff = new Date(now.getTime() - timeoutMs);
  const stale = await sql<{ id: number }[]>`
    select id from test_runs where state = 'running' and coalesce(last_activity_at, run_started_at, created_at) < ${cutoff}`;
  const minutes = Math.round((timeoutMs / 60_000) * 10) / 10;
  for (const { id } of stale) {
    await sql.begin((tx) => completeRun(tx, id, now, `no report from the run for ${minutes} min: a shard's process died or hung`));
  }
  return stale.map((row) => row.id);
}

export interface Sweeper {
  stop(): Promise<void>;
}

/** Sweeps every `intervalMs`; each sweep is awaited before the next, and `stop` waits for the one under way. */
export function startSweeper(sql: Sql, clock: Clock, logger: Logger, options: { intervalMs: number; shardTimeoutMs: number }): Sweeper {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        const finished = await finishSilentRuns(sql, clock(), options.shardTimeoutMs);
        if (finished.length > 0) logger.warn({ runs: finished }, 'silent runs finished as error');
      } catch (error) {
        logger.error({ err: error }, 'sweep failed');
      }
    });
  }, options.intervalMs);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
