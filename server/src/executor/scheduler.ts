import { Cron } from 'croner';
import type { Sql } from '../db.ts';
import { scheduledEnvironments } from '../environments/index.ts';
import { createPendingRun } from '../runs/index.ts';

/**
 * Makes the runs of schedules that came due within `windowMs` before `now`. Each tick of each
 * environment makes one run, whichever server sees it first (a unique index on the tick); a
 * disabled environment makes none, nor one of a project without a test repository (it only
 * receives reports). Returns the ids made.
 */
export async function fireDueSchedules(sql: Sql, now: Date, windowMs: number): Promise<number[]> {
  const environments = await scheduledEnvironments(sql);
  const made: number[] = [];
  for (const environment of environments) {
    let tick: Date | undefined;
    try {
      tick = new Cron(environment.scheduled_trigger, { paused: true, timezone: 'UTC' }).previousRuns(1, now)[0];
    } catch {
      continue;
    }
    if (!tick || tick.getTime() <= now.getTime() - windowMs || tick < environment.created_at) continue;
    const run = await createPendingRun(
      sql,
      environment.project_id,
      {
        environmentId: environment.id,
        origin: 'schedule',
        distribution: 'shards',
        branch: null,
        build: null,
        metadata: {},
        overrides: [],
        tags: [],
        testCaseIds: [],
        sendNotifications: true,
        totalShards: 1,
        rerunSourceId: null,
        rerunOnlyFailed: false,
        scmActor: null,
        scheduledFor: tick,
        maxFailures: null,
      },
      now,
    );
    if (run) made.push(run.id);
  }
  return made;
}
