import { DAY_MS } from '../context.ts';
/** The window a score is taken over unless a request says otherwise; the one kept ready. */
export const WINDOW_DAYS = 14;

/** The first day (UTC, `YYYY-MM-DD`) of the last `days` days, today included. */
export function windowStart(now: Date, days: number): string {
  return new Date(now.getTime() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
}
