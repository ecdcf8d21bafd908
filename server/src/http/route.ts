import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import { type KeyScope, requireScope, type Scope } from './access.ts';
import { describeZodError, type ErrorShape, ValidationError } from './errors.ts';
import { flatError, generalError } from './openapi.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type AnyObject = z.ZodObject<z.ZodRawShape>;

interface RouteSpec<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  method: Method;
  /** Express syntax, `/api/snoozes/:id`; documented as `/api/snoozes/{id}`. */
  path: string;
  tag: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** The documented success body; omit for non-JSON answers, then give `produces`. */
  response?: z.ZodType;
  produces?: string;
  status?: number;
  /** Other success statuses the handler answers itself with the same body shape, with what each means. */
  alsoAnswers?: Record<number, string>;
  /** Error statuses of this operation beyond every route's (400, 401, 403, 404, 503), with what each means. */
  fails?: Record<number, string>;
  /** Public routes take no key and have no project scope. */
  public?: boolean;
  /** The key scope it needs: by default `read` to GET, `admin` to change anything. */
  needs?: KeyScope;
  errorShape?: ErrorShape;
  handler: (input: {
    params: z.infer<P>;
    query: z.infer<Q>;
    body: z.infer<B>;
    scope: Scope;
    req: Request;
    res: Response;
  }) => Promise<unknown>;
}

export interface RouteContext {
  /** Routes behind the bearer key, under /api. */
  api: Router;
  /** Public routes: no key, no project scope. */
  open: Router;
  registry: OpenAPIRegistry;
}

/**
 * The path of the first string under `value` holding NUL, which PostgreSQL text cannot store.
 * The path is built only for a find: this walks every string of every request body.
 */
function findNul(value: unknown): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? [] : null;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i]);
      if (found) return [String(i), ...found];
    }
    return null;
  }
  for (const key in value) {
    const found = findNul((value as Record<string, unknown>)[key]);
    if (found) return [key, ...found];
  }
  return null;
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string, mayHoldNul = true): z.infer<S> {
  const nul = mayHoldNul ? findNul(value) : null;
  if (nul) throw new ValidationError(`${[where, ...nul].join('.')}: must not contain the NUL character (\\u0000)`);
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(describeZodError(where, result.error));
  return result.data;
}

function toOpenApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/**
 * Registers one route: the Express handler and its OpenAPI entry, from the same zod schemas
 * that validate its params, query and body.
 */
export function addRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  ctx: RouteContext,
  spec: RouteSpec<P, Q, B>,
): void {
  const status = spec.status ?? 200;
  const needs: KeyScope = spec.needs ?? (spec.method === 'get' ? 'read' : 'admin');
  const errorBody = spec.errorShape === 'flat' ? flatError : generalError;
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorBody } } });
  const config: RouteConfig = {
    method: spec.method,
    path: toOpenApiPath(spec.path),
    tags: [spec.tag],
    summary: spec.public ? spec.summary : `${spec.summary} (key scope: ${needs})`,
    security: spec.public ? [] : [{ bearer: [] }],
    request: {
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.query ? { query: spec.query } : {}),
      ...(spec.body ? { body: { content: { 'application/json': { schema: spec.body } }, required: true } } : {}),
    },
    responses: {
      [status]: spec.response
        ? { description: 'Success', content: { 'application/json': { schema: spec.response } } }
        : { description: 'Success', content: { [spec.produces ?? 'application/octet-stream']: { schema: { type: 'string' } } } },
      ...Object.fromEntries(
        Object.entries(spec.alsoAnswers ?? {}).map(([code, description]) => [
          code,
          { description, content: { 'application/json': { schema: spec.response ?? { type: 'string' } } } },
        ]),
      ),
      400: errorResponse('A param, query or body field failed validation; the message names it'),
      ...(spec.public ? {} : { 401: { description: 'Missing or wrong key', content: { 'application/json': { schema: generalError } } } }),
      ...(spec.public ? {} : { 403: { description: "Not allowed: not this key's project, or a key scope too small for this operation", content: { 'application/json': { schema: generalError } } } }),
      404: errorResponse('Not found in this project'),
      ...Object.fromEntries(Object.entries(spec.fails ?? {}).map(([code, description]) => [code, errorResponse(description)])),
      503: errorResponse('The database cannot be reached now: retry after the Retry-After seconds'),
    },
  };
  ctx.registry.registerPath(config);

  (spec.public ? ctx.open : ctx.api)[spec.method](spec.path, async (req: Request, res: Response) => {
    if (spec.errorShape) res.locals.errorShape = spec.errorShape;
    const scope = spec.public ? (undefined as unknown as Scope) : requireScope(res, needs);
    const params = spec.params ? parseInput(spec.params, req.params, 'path') : ({} as z.infer<P>);
    const query = spec.query ? parseInput(spec.query, req.query, 'query') : ({} as z.infer<Q>);
    const body = spec.body ? parseInput(spec.body, req.body ?? {}, 'body', res.locals.bodyMayHoldNul !== false) : (undefined as z.infer<B>);
    const result = await spec.handler({ params, query, body, scope, req, res });
    if (!res.headersSent) res.status(status).json(result);
  });
}
