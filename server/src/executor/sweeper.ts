import type { Logger } from 'pino';
import { finishUnplannedRuns } from '../agents/index.ts';
import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { queueDueDigests } from '../notifications/index.ts';
import { failRun, handOverLostRuns } from '../runs/index.ts';
import { fireDueSchedules } from './scheduler.ts';
import { runsSilentSince } from './store.ts';

/**
 * Runs whose shards went silent (a reporter's process died without its end) are finished as
 * `error` once nothing arrived for `timeoutMs`. Returns the ids it finished.
 */
export async function finishSilentRuns(sql: Sql, now: Date, timeoutMs: number): Promise<number[]> {
  const cutoff = new Date(now.getTime() - timeoutMs);
  const stale = await runsSilentSince(sql, cutoff);
  const minutes = Math.round((timeoutMs / 60_000) * 10) / 10;
  for (const { id } of stale) {
    await failRun(sql, id, `no report from the run for ${minutes} min: a shard's process died or hung`, now);
  }
  return stale.map((row) => row.id);
}

export interface Sweeper {
  stop(): Promise<void>;
}

/**
 * Every `intervalMs`: silent and lost runs end, and runs of agents none of whom is left to plan
 * them; due schedules make their runs, due digest subscriptions their digests. Each sweep is awaited
 * before the next, and `stop` waits for the one under way.
 */
export function startSweeper(
  sql: Sql,
  clock: Clock,
  logger: Logger,
  options: { intervalMs: number; shardTimeoutMs: number; lostRunMs: number; runTakeovers: number; scheduleWindowMs: number; agentLeaseMs: number },
): Sweeper {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        const now = clock();
        const finished = await finishSilentRuns(sql, now, options.shardTimeoutMs);
        if (finished.length > 0) logger.warn({ runs: finished }, 'silent runs finished as error');
        const lost = await handOverLostRuns(sql, now, options.lostRunMs, options.runTakeovers);
        if (lost.handedOver.length > 0) logger.warn({ runs: lost.handedOver }, 'runs of a lost executor handed to another');
        if (lost.ended.length > 0) logger.warn({ runs: lost.ended }, 'runs of a lost executor finished as error');
        const unplanned = await finishUnplannedRuns(sql, now, options.agentLeaseMs);
        if (unplanned.length > 0) logger.warn({ runs: unplanned }, 'runs of agents that all went silent before planning finished as error');
        const scheduled = await fireDueSchedules(sql, now, options.scheduleWindowMs);
        if (scheduled.length > 0) logger.info({ runs: scheduled }, 'scheduled runs made');
        const digests = await queueDueDigests(sql, now);
        if (digests.length > 0) logger.info({ digest_subscriptions: digests }, 'digests queued');
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
