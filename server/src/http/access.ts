import type { Response } from 'express';
import { HttpError } from './errors.ts';

/** What a key may do, each including the ones before it. */
export const KEY_SCOPES = ['read', 'report', 'admin'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** Whether a key of scope `held` may do what needs `needed`. */
export function scopeAllows(held: KeyScope, needed: KeyScope): boolean {
  return KEY_SCOPES.indexOf(held) >= KEY_SCOPES.indexOf(needed);
}

export type Principal = { kind: 'project'; keyId: string; scope: KeyScope } | { kind: 'user'; keyId: string; userId: string; scope: KeyScope };

/** Who is asking, and for which project: every API request is scoped to one. */
export interface Scope {
  projectId: number;
  principal: Principal;
}

/** The user behind a personal key, or null for a project key (a machine). */
export function actingUserId(scope: Scope): string | null {
  return scope.principal.kind === 'user' ? scope.principal.userId : null;
}

/** The request's scope, when its key may do what `needed` names; else a 403 that says what it lacks. */
export function requireScope(res: Response, needed: KeyScope): Scope {
  const scope = res.locals.scope as Scope | undefined;
  if (!scope) throw new HttpError(401, 'missing bearer key: send Authorization: Bearer <API_KEY>');
  if (!scopeAllows(scope.principal.scope, needed)) {
    throw new HttpError(403, `this key's scope is ${scope.principal.scope}; this needs a key of scope ${needed}`);
  }
  return scope;
}

/** A body `project_id` is legacy: when set, it must be the project the key resolved to. */
export function checkLegacyProjectId(scope: Scope, projectId: number | undefined): void {
  if (projectId !== undefined && projectId !== scope.projectId) {
    throw new HttpError(403, `body.project_id: ${projectId} is not the project of this request (${scope.projectId})`);
  }
}
