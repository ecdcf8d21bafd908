import { z } from 'zod';
import './openapi.ts';

/** The runner's test id: 20 hex, a dash, 20 hex (41 characters), different per runner project. */
export const runnerTestId = z.string().regex(/^[0-9a-f]{20}-[0-9a-f]{20}$/, 'must be a 41-character runner test id (20 hex, "-", 20 hex)');

/** The largest value of PostgreSQL's `integer`. */
export const MAX_INT4 = 2_147_483_647;

/**
 * Whether an ISO 8601 text names a day in the years 1 to 9999, as written and in UTC: PostgreSQL
 * refuses the year 0000 as written even when its offset moves the instant into the year 1.
 */
function inStorableYears(text: string): boolean {
  // Most texts say a year an offset (under a day) cannot carry out of 1 to 9999: no Date to make.
  const written = /^(\d{4})-/.exec(text)?.[1];
  if (written !== undefined && written >= '0002' && written <= '9998') return true;
  const year = new Date(text).getUTCFullYear();
  return year >= 1 && year <= 9999 && !text.startsWith('0000');
}
const STORABLE_YEARS = 'must be a date in the years 1 to 9999';

/** Whether an ISO 8601 text's UTC offset, if it has one, is within PostgreSQL's ±15:59 (the zod format caps the minutes). */
function inStorableOffset(text: string): boolean {
  const hours = /T.*[+-](\d\d):\d\d$/.exec(text)?.[1];
  return hours === undefined || Number(hours) <= 15;
}
const STORABLE_OFFSET = 'must have a UTC offset within ±15:59';

export const timestamp = z.iso.datetime({ offset: true }).refine(inStorableYears, STORABLE_YEARS).refine(inStorableOffset, STORABLE_OFFSET);
/** A day or an instant, ISO 8601. */
export const dayOrTimestamp = z.iso
  .date()
  .or(z.iso.datetime({ offset: true }))
  .refine(inStorableYears, STORABLE_YEARS)
  .refine(inStorableOffset, STORABLE_OFFSET);

/**
 * A whole number in a path or query (strings there): decimal digits only, so that `0x1F`, `1e3`
 * or ` 7` are refused rather than read as numbers.
 */
export function decimalInteger(min: number, max: number) {
  return z
    .string()
    .regex(/^[0-9]{1,10}$/, 'must be a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .openapi({ type: 'integer', minimum: min, maximum: max });
}

export const TRUNCATION_MARKER = '…[truncated]';

/**
 * Text kept to `max` characters, a longer one cut with a marker: for what a runner names (titles,
 * paths), where refusing one long name would refuse every test sent beside it.
 */
export function truncatedText(max: number) {
  return z
    .string()
    .transform((text) => {
      if (text.length <= max) return text;
      let end = max - TRUNCATION_MARKER.length;
      // Never half of a surrogate pair.
      if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end -= 1;
      return text.slice(0, end) + TRUNCATION_MARKER;
    })
    .openapi({ type: 'string', description: `cut to ${max} characters, ending "${TRUNCATION_MARKER}", when longer` });
}

/** A database id in a path or query. */
export const positiveId = decimalInteger(1, MAX_INT4);
/** A database id in a JSON body: a number, not coerced. */
export const bodyId = z.number().int().min(1).max(MAX_INT4);

/** A path `{id}` that is a database id. */
export const idParams = z.object({ id: positiveId }).strict();

/** `value` as literal text inside a LIKE pattern (backslash is PostgreSQL's default escape). */
