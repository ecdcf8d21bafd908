import { DAY_MS } from '../context.ts';
import { InvalidInputError } from '../errors.ts';

export interface DayWindow {
  /** YYYY-MM-DD, UTC, both ends included. */
  from: string;
  to: string;
  days: string[];
}

const MAX_DAYS = 366;

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * The window of days (UTC, inclusive, oldest first): `days` ending today, or `start_date` to
 * `end_date`, which go together.
 */
export function dayWindow(query: { days: number; start_date?: string; end_date?: string }, now: Date): DayWindow {
  if ((query.start_date === undefined) !== (query.end_date === undefined)) {
    throw new InvalidInputError(`query.${query.start_date === undefined ? 'start_date' : 'end_date'}: start_date and end_date go together`);
  }
  let from: number;
  let to: number;
  if (query.start_date !== undefined && query.end_date !== undefined) {
    from = Date.parse(`${query.start_date.slice(0, 10)}T00:00:00Z`);
    to = Date.parse(`${query.end_date.slice(0, 10)}T00:00:00Z`);
    if (to < from) throw new InvalidInputError('query.end_date: must not be before start_date');
    if ((to - from) / DAY_MS + 1 > MAX_DAYS) throw new InvalidInputError(`query.end_date: a window is at most ${MAX_DAYS} days`);
  } else {
    to = Date.parse(`${utcDay(now)}T00:00:00Z`);
    from = to - (query.days - 1) * DAY_MS;
  }
  const days: string[] = [];
  for (let day = from; day <= to; day += DAY_MS) days.push(utcDay(new Date(day)));
  return { from: days[0] as string, to: days[days.length - 1] as string, days };
}

/** A percentage, 0-100, two decimals; 0 of 0 is 0. */
export function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}
