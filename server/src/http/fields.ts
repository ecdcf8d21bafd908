import { z } from 'zod';

/** The runner's test id: 20 hex, a dash, 20 hex (41 characters), different per runner project. */
export const runnerTestId = z
  .string()
  .regex(/^[0-9a-f]{20}-[0-9a-f]{20}$/, 'must be a 41-character runner test id (20 hex, "-", 20 hex)');

export const timestamp = z.iso.datetime({ offset: true });

/** A database id in a path or query (strings there), coerced to a number. */
export const positiveId = z.coerce.number().int().min(1).max(2_147_483_647);
/** A database id in a JSON body: a number, not coerced. */
export const bodyId = z.number().int().min(1).max(2_147_483_647);

/** A path `{id}` that is a database id. */
export const idParams = z.object({ id: positiveId }).strict();

/** `tags` as a comma-separated query value; `@smoke` and `smoke` alike. */
export function parseTagList(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean)
    .map((tag) => (tag.startsWith('@') ? tag : `@${tag}`));
}

/** `value` as literal text inside a LIKE pattern (backslash is PostgreSQL's default escape). */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}
