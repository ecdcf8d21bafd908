import { Cron } from 'croner';

// When a digest subscription is due: the moments of its hour (and weekday) in its time zone, as
// croner reads them (daylight saving included), and which days a digest sent then covers.

export interface Schedule {
  period: 'day' | 'week';
  hour: number;
  /** ISO weekday, 1 Monday … 7 Sunday; null for a daily digest. */
  weekday: number | null;
  time_zone: string;
}

function cronOf(schedule: Schedule): Cron {
  // Cron's weekday field counts from Sunday = 0.
  const days = schedule.period === 'week' ? String((schedule.weekday ?? 1) % 7) : '*';
  return new Cron(`0 ${schedule.hour} * * ${days}`, { paused: true, timezone: schedule.time_zone });
}

/** The first moment of the schedule after `after`. */
export function nextDue(schedule: Schedule, after: Date): Date {
  const next = cronOf(schedule).nextRun(after);
  if (!next) throw new Error(`the digest schedule ${JSON.stringify(schedule)} has no next moment`);
  return next;
}

/** The latest moment of the schedule at or before `now`; null when there is none (a schedule never reached). */
export function latestDue(schedule: Schedule, now: Date): Date | null {
  return cronOf(schedule).previousRuns(1, new Date(now.getTime() + 1))[0] ?? null;
}

/**
 * The moment a digest sent at `dueAt` is composed as of: the end of the UTC day before, so that it
 * covers whole UTC days (the digest's days, as its page and the API count them) and only days that
 * are over, whatever the time zone it is sent in.
 */
export function digestAsOf(dueAt: Date): Date {
  return new Date(Date.UTC(dueAt.getUTCFullYear(), dueAt.getUTCMonth(), dueAt.getUTCDate()) - 1);
}
