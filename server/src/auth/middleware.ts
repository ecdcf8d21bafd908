import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { findSession, readCookie, SESSION_COOKIE } from '../sessions/index.ts';
import type { Person } from '../http/access.ts';
import { HttpError } from '../http/errors.ts';
import { lesserRole, type Principal, roleOfScope, type Scope } from '../principals.ts';
import { roleInProject, userProjectIds } from '../projects/index.ts';
import { isTerminal } from '../states.ts';
import { RUN_ENDED } from '../errors.ts';
import { parseKey, secretMatches } from './keys.ts';
import { keyLookup, type KeyLookup } from './key-lookup.ts';
import { type StoredKey, touchKey } from './store.ts';

function parseProjectHeader(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^[1-9]\d{0,9}$/.test(value)) throw new HttpError(400, 'header.x-project-id: must be a positive integer');
  return Number(value);
}

/** How often a key's `last_used_at` is written, per process: the listing says the day, not the request. */
const TOUCH_EVERY_MS = 60_000;
const touched = new Map<string, number>();

function noteUse(sql: Sql, keyId: string, now: Date): void {
  const last = touched.get(keyId) ?? 0;
  if (now.getTime() - last < TOUCH_EVERY_MS) return;
  touched.set(keyId, now.getTime());
  // Not awaited: a request never waits on bookkeeping, and a lost write only makes the date older.
  touchKey(sql, keyId, now).catch(() => touched.delete(keyId));
}

/** The stored key a bearer token is; a 401 when it is none. */
async function keyOf(sql: Sql, findKey: KeyLookup, token: string, now: Date): Promise<StoredKey> {
  const parsed = parseKey(token);
  const stored = parsed ? await findKey(parsed.id) : null;
  if (!parsed || !secretMatches(parsed.secret, stored?.secret_hash ?? null) || !stored) {
    throw new HttpError(401, 'invalid API key');
  }
  // A run's key and an agent's token end with their run, whatever else it did to its keys: from its
  // end on they are wrong keys, so that nothing written with them can come after it.
  if (stored.test_run_id !== null && stored.run_state !== null && isTerminal(stored.run_state)) {
    const whose = stored.agent_id !== null ? `agent ${stored.agent_id}'s token` : "this run's key";
    throw new HttpError(401, `${whose} ended with its run ${stored.test_run_id} (${stored.run_state})`, { code: RUN_ENDED, run_state: stored.run_state });
  }
  noteUse(sql, stored.id, now);
  return stored;
}

async function resolveScope(sql: Sql, stored: StoredKey, headerProject: number | null): Promise<Scope> {
  if (stored.project_id !== null) {
    if (headerProject !== null && headerProject !== stored.project_id) {
      throw new HttpError(403, 'this key belongs to another project than x-project-id names');
    }
    return { projectId: stored.project_id, principal: projectPrincipal(stored) };
  }
  const userId = stored.user_id as string;
  const projectId = headerProject ?? (await onlyProject(sql, userId));
  const role = await roleInProject(sql, projectId, userId);
  if (role === null) throw new HttpError(403, 'you are not a member of this project');
  // A personal key never does more than its person's role, read now: a demotion holds at once.
  return { projectId, principal: { kind: 'user', keyId: stored.id, userId, role: lesserRole(roleOfScope(stored.scope), role) } };
}

/** A project's key, a run's key or an agent's token, as the row says. */
function projectPrincipal(stored: StoredKey): Principal {
  if (stored.agent_id !== null && stored.test_run_id !== null) return { kind: 'agent', keyId: stored.id, runId: stored.test_run_id, agentId: stored.agent_id };
  if (stored.test_run_id !== null) return { kind: 'run', keyId: stored.id, runId: stored.test_run_id, joinsAsAgent: stored.joins_as_agent };
  return { kind: 'project', keyId: stored.id, scope: stored.scope };
}

/** The project of a personal key sent without x-project-id: its person's one project. */
async function onlyProject(sql: Sql, userId: string): Promise<number> {
  const projects = await userProjectIds(sql, userId);
  if (projects.length === 1) return projects[0] as number;
  throw new HttpError(
    projects.length === 0 ? 403 : 400,
    projects.length === 0 ? 'you are not a member of any project' : 'header.x-project-id: required with a personal key that belongs to several projects',
  );
}

/** A person signed in to the dashboard acts with their role, in a project they belong to (an instance admin: in any). */
async function sessionScope(sql: Sql, userId: string, headerProject: number | null): Promise<Scope> {
  if (headerProject === null) throw new HttpError(400, 'header.x-project-id: required when signed in to the dashboard');
  const role = await roleInProject(sql, headerProject, userId);
  if (role === null) throw new HttpError(404, 'project not found');
  return { projectId: headerProject, principal: { kind: 'user', keyId: null, userId, role } };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the bearer key and `x-project-id` into the request's scope; with no key, the dashboard
 * session of the cookie, whose calls that change anything must carry its CSRF token in
 * `x-csrf-token` (a page of another site can send the cookie, never the token).
 */
export function authenticate(sql: Sql, clock: Clock): RequestHandler {
  const findKey = keyLookup(sql);
  return async (req, res, next) => {
    const authorization = req.get('authorization');
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    const cookie = authorization === undefined ? readCookie(req.get('cookie'), SESSION_COOKIE) : null;
    if (!token && cookie) {
      const session = await findSession(sql, cookie, clock());
      if (!session) throw new HttpError(401, 'the session has ended: sign in again');
      if (!SAFE_METHODS.has(req.method) && !csrfMatches(req.get('x-csrf-token'), session.csrfToken)) {
        throw new HttpError(403, "header.x-csrf-token: missing or not this session's");
      }
      res.locals.person = { userId: session.userId, keyScope: null } satisfies Person;
      await scoped(res, () => sessionScope(sql, session.userId, parseProjectHeader(req.get('x-project-id'))));
      return next();
    }
    if (!token) throw new HttpError(401, 'missing bearer key: send Authorization: Bearer <API_KEY>');
    const stored = await keyOf(sql, findKey, token, clock());
    if (stored.user_id !== null) res.locals.person = { userId: stored.user_id, keyScope: stored.scope } satisfies Person;
    await scoped(res, () => resolveScope(sql, stored, parseProjectHeader(req.get('x-project-id'))));
    next();
  };
}

/**
 * The request's project scope, or the refusal that finding it met: a person's request may still be
 * one that needs no project (an instance admin making a project), which the route decides.
 */
async function scoped(res: Response, find: () => Promise<Scope>): Promise<void> {
  try {
    res.locals.scope = await find();
  } catch (error) {
    if (!(error instanceof HttpError) || res.locals.person === undefined) throw error;
    res.locals.scopeRefusal = error;
  }
}

function csrfMatches(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
