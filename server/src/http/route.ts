import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import { authorize, type Person, requestPerson, requestScope, type Role, type RunTarget, type Scope } from './access.ts';
import { type BodyWatch, watchBody } from './body.ts';
import { describeZodError, type ErrorShape, ValidationError } from './errors.ts';
import { flatError, generalError } from './openapi.ts';
import { checkAnswers } from './response-check.ts';

/** The run and agent an agent's own route names. */
type AgentTarget = { runId: number; agentId: number };

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type AnyObject = z.ZodObject<z.ZodRawShape>;

/**
 * One operation. `S` is what its handler gets as `scope` and `W` as `person`: a project's scope on a
 * route behind a key, a person on a `person` operation, null where there is none (a public route).
 */
interface RouteSpec<
  P extends AnyObject,
  Q extends AnyObject,
  B extends z.ZodType,
  S extends Scope | null = Scope | null,
  W extends Person | null = Person | null,
> {
  method: Method;
  /** Express syntax, `/api/snoozes/:id`; documented as `/api/snoozes/{id}`. */
  path: string;
  tag: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** A body that is not JSON (the handler reads `req` itself), as the OpenAPI description documents it. */
  consumes?: { contentType: string; description: string };
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
  /** The role it needs (a key: the scope of that rung): by default `viewer` to GET, `admin` to change anything. */
  needs?: Role;
  /**
   * The run it acts on: a run's key and an agent's token are taken here, for their own run alone.
   * Read from the path and the body as sent, before either is validated: a value that is not the
   * credential's own run is refused.
   */
  run?: (input: { params: z.infer<P>; body: z.infer<B> }) => number;
  /**
   * Joining the run it names as an agent: by role, and of the run-bound credentials only the key
   * the executor serves that run with (a run's key or an agent's token would mint tokens).
   */
  joins?: (input: { params: z.infer<P>; body: z.infer<B> }) => number;
  /** An agent's own route: only that agent's token is taken. */
  agent?: (input: { params: z.infer<P>; body: z.infer<B> }) => AgentTarget;
  /**
   * An operation outside any project (making one), for a person (a session or a personal key)
   * rather than a project's member: who may, as documented; the handler checks it.
   */
  person?: 'instance-admin' | 'person';
  errorShape?: ErrorShape;
  // A method, so that each overload of addRoute below (a scope, a person, neither) is one of this.
  handler(input: {
    params: z.infer<P>;
    query: z.infer<Q>;
    body: z.infer<B>;
    /** The key's project and role; null on a public route and a `person` operation. */
    scope: S;
    /** Set on a `person` operation instead of `scope`. */
    person: W;
    req: Request;
    res: Response;
    /**
     * Aborted when the client goes away, or stops sending a body the handler streams for
     * `uploadIdleMs`: a handler that reads `req` stops on it, leaving nothing behind.
     */
    signal: AbortSignal;
  }): Promise<unknown>;
}

export interface RouteContext {
  /** Routes behind the bearer key, under /api. */
  api: Router;
  /** Public routes: no key, no project scope. */
  open: Router;
  registry: OpenAPIRegistry;
  /** How long a streamed body may send nothing before it is dropped (PROCTOR_UPLOAD_IDLE_S); 30 s if not given. */
  uploadIdleMs?: number;
  /** Every JSON answer checked against its documented schema, a mismatch a 500 (PROCTOR_CHECK_RESPONSES; the tests turn it on). */
  checkResponses?: boolean;
}

const NEVER = new AbortController().signal;

/**
 * Runs a handler with its body watched when the body is still to be read (a streamed upload: a
 * JSON body was read before): once the client has gone or stalled, what the handler fails with is
 * that (the 400 or 408 to log and answer), not the broken stream's error it saw.
 */
async function watched<T>(ctx: RouteContext, req: Request, res: Response, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const watch: BodyWatch | null = req.complete ? null : watchBody(req, res, ctx.uploadIdleMs ?? 30_000);
  try {
    return await run(watch?.signal ?? NEVER);
  } catch (error) {
    throw watch?.signal.aborted ? watch.signal.reason : error;
  } finally {
    watch?.stop();
  }
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

/** Who may call an operation, as its summary says it. */
function whoMay(needs: Role, spec: { run?: unknown; agent?: unknown; joins?: unknown }): string {
  if (spec.agent) return "the agent's own token";
  return `role: ${needs}${spec.run ? "; also the run's own key" : spec.joins ? "; not a run's key or an agent's token" : ''}`;
}

/** The run (and agent) a request names, as numbers: ids in a path come as text. */
function runTargetOf<P, B>(
  spec: {
    run?: (input: { params: P; body: B }) => number;
    joins?: (input: { params: P; body: B }) => number;
    agent?: (input: { params: P; body: B }) => AgentTarget;
  },
  params: P,
  body: B,
): RunTarget | null {
  if (spec.agent) {
    const target = spec.agent({ params, body });
    return { runId: Number(target.runId), agentId: Number(target.agentId) };
  }
  if (spec.run) return { runId: Number(spec.run({ params, body })) };
  if (spec.joins) return { runId: Number(spec.joins({ params, body })), joining: true };
  return null;
}

/** The role each operation needs, by method and path, for pages that offer only what a person may do. */
const ROLE_OF_ROUTE: { method: string; pattern: RegExp; role: Role | null }[] = [];

function rememberRole(method: Method, path: string, role: Role | null): void {
  const pattern = new RegExp(`^${path.replace(/:\w+/g, '[^/]+')}$`);
  if (!ROLE_OF_ROUTE.some((known) => known.method === method && known.pattern.source === pattern.source)) ROLE_OF_ROUTE.push({ method, pattern, role });
}

/** The role `METHOD /path` needs; null when no person may call it (an agent's own route) or it is unknown. */
export function roleNeededFor(api: string): Role | null {
  const [method = '', path = ''] = api.split(' ');
  const known = ROLE_OF_ROUTE.find((route) => route.method === method.toLowerCase() && route.pattern.test(path.split('?')[0] ?? ''));
  return known?.role ?? null;
}

/**
 * Registers one route: the Express handler and its OpenAPI entry, from the same zod schemas
 * that validate its params, query and body. This one is behind a key: its handler gets the key's
 * project scope (`scope`), and no person.
 */
export function addRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  ctx: RouteContext,
  spec: RouteSpec<P, Q, B, Scope, null> & { public?: false; person?: undefined },
): void;
/** A public route: no key, no scope, no person. */
export function addRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  ctx: RouteContext,
  spec: RouteSpec<P, Q, B, null, null> & { public: true; person?: undefined },
): void;
/** An operation outside any project, for a person: its handler gets the person, no scope. */
export function addRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  ctx: RouteContext,
  spec: RouteSpec<P, Q, B, null, Person> & { public?: false; person: 'instance-admin' | 'person' },
): void;
export function addRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(ctx: RouteContext, spec: RouteSpec<P, Q, B>): void {
  const status = spec.status ?? 200;
  const needs: Role = spec.needs ?? (spec.method === 'get' ? 'viewer' : 'admin');
  const operation = `${spec.method.toUpperCase()} ${toOpenApiPath(spec.path)}`;
  if (!spec.public && !spec.person) rememberRole(spec.method, spec.path, spec.agent ? null : needs);
  const errorBody = spec.errorShape === 'flat' ? flatError : generalError;
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorBody } } });
  const config: RouteConfig = {
    method: spec.method,
    path: toOpenApiPath(spec.path),
    tags: [spec.tag],
    summary: spec.public
      ? spec.summary
      : `${spec.summary} (${spec.person ? (spec.person === 'person' ? 'any person' : 'an instance admin') : whoMay(needs, spec)})`,
    security: spec.public ? [] : [{ bearer: [] }],
    ...(spec.public
      ? {}
      : { 'x-proctor-role': spec.person ?? (spec.agent ? 'agent' : needs), 'x-proctor-run-key': spec.run !== undefined || spec.agent !== undefined }),
    request: {
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.query ? { query: spec.query } : {}),
      ...(spec.body ? { body: { content: { 'application/json': { schema: spec.body } }, required: true } } : {}),
      ...(spec.consumes
        ? {
            body: {
              description: spec.consumes.description,
              content: { [spec.consumes.contentType]: { schema: { type: 'object', additionalProperties: { type: 'string', format: 'binary' } } } },
              required: true,
            },
          }
        : {}),
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
      ...(spec.public
        ? {}
        : {
            403: {
              description: "Not allowed: not this key's project, or a role or key scope below this operation's; the message names the operation",
              content: { 'application/json': { schema: generalError } },
            },
          }),
      404: errorResponse('Not found in this project'),
      ...Object.fromEntries(Object.entries(spec.fails ?? {}).map(([code, description]) => [code, errorResponse(description)])),
      503: errorResponse('The database cannot be reached now: retry after the Retry-After seconds'),
    },
  };
  ctx.registry.registerPath(config);
  // What each success status's body is, as the document above says: null where it is not JSON.
  const documented = new Map<number, z.ZodType | null>(
    [status, ...Object.keys(spec.alsoAnswers ?? {}).map(Number)].map((code) => [code, spec.response ?? null]),
  );

  (spec.public ? ctx.open : ctx.api)[spec.method](spec.path, async (req: Request, res: Response) => {
    if (ctx.checkResponses) checkAnswers(res, operation, documented);
    // Who asks is settled first, in the general shape every route answers 401, 403 and a missing project in.
    const person = spec.person ? requestPerson(res) : null;
    const scope = spec.public || spec.person ? null : requestScope(res);
    if (spec.errorShape) res.locals.errorShape = spec.errorShape;
    if (person) {
      const params = spec.params ? parseInput(spec.params, req.params, 'path') : ({} as z.infer<P>);
      const query = spec.query ? parseInput(spec.query, req.query, 'query') : ({} as z.infer<Q>);
      const body = spec.body ? parseInput(spec.body, req.body ?? {}, 'body') : (undefined as z.infer<B>);
      const result = await watched(ctx, req, res, (signal) => spec.handler({ params, query, body, scope: null, person, req, res, signal }));
      if (!res.headersSent) res.status(status).json(result);
      return;
    }
    // A role is checked before the input (a viewer is refused whatever it sent); a run's, once the input says which run.
    const runBound = scope !== null && (scope.principal.kind === 'run' || scope.principal.kind === 'agent');
    if (scope && (!runBound || (!spec.run && !spec.agent && !spec.joins))) authorize(scope, operation, needs, null, spec.agent !== undefined);
    // A run-bound credential names its run (and agent) before anything else is read: the path and body as sent.
    if (scope && runBound)
      authorize(scope, operation, needs, runTargetOf(spec, req.params as z.infer<P>, (req.body ?? {}) as z.infer<B>), spec.agent !== undefined);
    const params = spec.params ? parseInput(spec.params, req.params, 'path') : ({} as z.infer<P>);
    const query = spec.query ? parseInput(spec.query, req.query, 'query') : ({} as z.infer<Q>);
    const body = spec.body ? parseInput(spec.body, req.body ?? {}, 'body', res.locals.bodyMayHoldNul !== false) : (undefined as z.infer<B>);
    const result = await watched(ctx, req, res, (signal) => spec.handler({ params, query, body, scope, person: null, req, res, signal }));
    if (!res.headersSent) res.status(status).json(result);
  });
}
