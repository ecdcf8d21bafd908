import type { Response } from 'express';
import type { z } from 'zod';
import { describeZodError } from './errors.ts';

/** An answer that is not what the OpenAPI document says it is: a fault of the server, a 500. */
export class ResponseDriftError extends Error {}

/**
 * The path of every field `sent` holds that `parsed` (the schema's output) dropped: a zod object
 * strips keys it does not declare, so a key present in what was sent and absent from what was
 * parsed is one the OpenAPI document does not name.
 */
function undocumentedKeys(sent: unknown, parsed: unknown, path: string[], found: string[]): void {
  if (typeof sent !== 'object' || sent === null || typeof parsed !== 'object' || parsed === null) return;
  if (Array.isArray(sent)) {
    if (!Array.isArray(parsed)) return;
    sent.forEach((item, i) => undocumentedKeys(item, parsed[i], [...path, String(i)], found));
    return;
  }
  for (const key of Object.keys(sent)) {
    if (!(key in parsed)) found.push([...path, key].join('.'));
    else undocumentedKeys((sent as Record<string, unknown>)[key], (parsed as Record<string, unknown>)[key], [...path, key], found);
  }
}

/**
 * Why `body`, answered with `status`, is not what `documented` (status to schema, null for a
 * status whose body is not JSON) says; null when it is. The body is read as the client reads it,
 * through JSON, so that a Date is the string the client gets.
 */
export function responseDrift(documented: ReadonlyMap<number, z.ZodType | null>, status: number, body: unknown): string | null {
  if (!documented.has(status)) return `status ${status} is not documented (documented: ${[...documented.keys()].join(', ')})`;
  const schema = documented.get(status);
  if (!schema) return `status ${status} is documented as not JSON, and JSON was sent`;
  const sent: unknown = body === undefined ? undefined : JSON.parse(JSON.stringify(body));
  const result = schema.safeParse(sent);
  if (!result.success) return describeZodError('response', result.error);
  const extra: string[] = [];
  undocumentedKeys(sent, result.data, ['response'], extra);
  return extra.length > 0 ? extra.map((field) => `${field}: not in the documented schema`).join('; ') : null;
}

/**
 * Checks every JSON success answer of one request, whoever sends it (the route, or the handler
 * itself with `res.json`), before it is sent: a drift throws, and the request fails with a 500
 * whose log names the operation and the field. Error answers (400 and up) keep their own shapes.
 */
export function checkAnswers(res: Response, operation: string, documented: ReadonlyMap<number, z.ZodType | null>): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    if (res.statusCode < 400) {
      const drift = responseDrift(documented, res.statusCode, body);
      if (drift) throw new ResponseDriftError(`response check: ${operation} answered what its OpenAPI entry does not say: ${drift}`);
    }
    return json(body);
  };
}
