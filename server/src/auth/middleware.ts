import type { RequestHandler } from 'express';
import type { Sql } from '../db.ts';
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

/** Resolves the bearer key and `x-project-id` into the request's scope. */
export function authenticate(sql: Sql): RequestHandler {
  return async (req, res, next) => {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!token) throw new HttpError(401, 'missing bearer key: send Authorization: Bearer <API_KEY>');
    res.locals.scope = await resolveScope(sql, token, parseProjectHeader(req.get('x-project-id')));
    next();
  };
}
