import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { findSession, readCookie, SESSION_COOKIE } from '../sessions/index.ts';
import type { Principal, Scope } from '../http/access.ts';
import { HttpError } from '../http/errors.ts';
import { isMember, userProjectIds } from '../projects/index.ts';
import { parseKey, secretMatches } from './keys.ts';
import { findKey } from './store.ts';

function parseProjectHeader(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^[1-9]\d{0,9}$/.test(value)) throw new HttpError(400, 'header.x-project-id: must be a positive integer');
  return Number(value);
}

async function resolveScope(sql: Sql, token: string, headerProject: number | null): Promise<Scope> {
  const parsed = parseKey(token);
  const stored = parsed ? await findKey(sql, parsed.id) : null;
  if (!parsed || !secretMatches(parsed.secret, stored?.secret_hash ?? null) || !stored) {
    throw new HttpError(401, 'invalid API key');
  }
  if (stored.project_id !== null) {
    if (headerProject !== null && headerProject !== stored.project_id) {
      throw new HttpError(403, 'this key belongs to another project than x-project-id names');
    }
    return { projectId: stored.project_id, principal: { kind: 'project', keyId: stored.id, scope: stored.scope } };
  }
  const userId = stored.user_id as string;
  const principal: Principal = { kind: 'user', keyId: stored.id, userId, scope: stored.scope };
  if (headerProject !== null) {
    if (!(await isMember(sql, headerProject, userId))) throw new HttpError(403, 'you are not a member of this project');
    return { projectId: headerProject, principal };
  }
  const projects = await userProjectIds(sql, userId);
  if (projects.length === 1) return { projectId: projects[0] as number, principal };
  throw new HttpError(
    projects.length === 0 ? 403 : 400,
    projects.length === 0 ? 'you are not a member of any project' : 'header.x-project-id: required with a personal key that belongs to several projects',
  );
}

/** A person signed in to the dashboard acts as a member may, in a project they belong to. */
async function sessionScope(sql: Sql, userId: string, headerProject: number | null): Promise<Scope> {
  const principal: Principal = { kind: 'user', keyId: 'session', userId, scope: 'admin' };
  if (headerProject === null) throw new HttpError(400, 'header.x-project-id: required when signed in to the dashboard');
  if (!(await isMember(sql, headerProject, userId))) throw new HttpError(404, 'project not found');
  return { projectId: headerProject, principal };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the bearer key and `x-project-id` into the request's scope; with no key, the dashboard
 * session of the cookie, whose calls that change anything must carry its CSRF token in
 * `x-csrf-token` (a page of another site can send the cookie, never the token).
 */
export function authenticate(sql: Sql, clock: Clock): RequestHandler {
  return async (req, res, next) => {
    const authorization = req.get('authorization');
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    const cookie = authorization === undefined ? readCookie(req.get('cookie'), SESSION_COOKIE) : null;
    if (!token && cookie) {
      const session = await findSession(sql, cookie, clock());
      if (!session) throw new HttpError(401, 'the session has ended: sign in again');
      if (!SAFE_METHODS.has(req.method) && !csrfMatches(req.get('x-csrf-token'), session.csrfToken)) {
        throw new HttpError(403, 'header.x-csrf-token: missing or not this session\'s');
      }
      res.locals.scope = await sessionScope(sql, session.userId, parseProjectHeader(req.get('x-project-id')));
      return next();
    }
    if (!token) throw new HttpError(401, 'missing bearer key: send Authorization: Bearer <API_KEY>');
    res.locals.scope = await resolveScope(sql, token, parseProjectHeader(req.get('x-project-id')));
    next();
  };
}

function csrfMatches(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
