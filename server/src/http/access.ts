import type { Response } from 'express';
import { type Person, type Principal, type Role, roleAllows, roleOf, type Scope } from '../principals.ts';
import { HttpError } from './errors.ts';

export { actingUserId, checkLegacyProjectId, KEY_SCOPES, type KeyScope, type Person, type Principal, ROLES, type Role, type Scope } from '../principals.ts';

/** The run a request acts on (a run key and an agent's token reach only their own), and the agent it acts as. */
export interface RunTarget {
  runId: number;
  /** Set on an agent's own routes: only that agent's token is taken there. */
  agentId?: number;
  /**
   * Joining the run as an agent, which mints an agent's token: a run's key and an agent's token may
   * not (whoever reads a suite's environment would get a token of its own), except the key the
   * executor serves a run of agents with.
   */
  joining?: boolean;
}

/** How a principal is named in a refusal. */
function describe(principal: Principal): string {
  switch (principal.kind) {
    case 'project':
      return `a project key of scope ${principal.scope}`;
    case 'user':
      return principal.keyId === null ? `a ${principal.role}` : `a personal key acting as ${principal.role}`;
    case 'run':
      return `the key of run ${principal.runId}`;
    case 'agent':
      return `the token of agent ${principal.agentId} of run ${principal.runId}`;
  }
}

/** The request's scope; a 401 when nobody is signed in or no key was given, or why its project could not be told. */
export function requestScope(res: Response): Scope {
  const scope = res.locals.scope as Scope | undefined;
  if (scope) return scope;
  if (res.locals.scopeRefusal) throw res.locals.scopeRefusal as HttpError;
  throw new HttpError(401, 'missing bearer key: send Authorization: Bearer <API_KEY>');
}

/** The person behind the request (a session or a personal key), for operations outside any project. */
export function requestPerson(res: Response): Person {
  const person = res.locals.person as Person | undefined;
  if (person) return person;
  if (res.locals.scope) throw new HttpError(403, "this operation is a person's: a project's key cannot do it");
  throw new HttpError(401, 'missing bearer key: send Authorization: Bearer <API_KEY>');
}

/**
 * Whether the request may call `operation` (`POST /api/keys`), which needs `needed`: a role for
 * people and keys, the run (and agent) for a run's key and an agent's token. A 403 names the
 * operation, what it needs and who asked.
 */
export function authorize(scope: Scope, operation: string, needed: Role, target: RunTarget | null, agentOnly: boolean): void {
  const { principal } = scope;
  const refuse = (what: string) => {
    throw new HttpError(403, `${operation} ${what}; this request comes with ${describe(principal)}`);
  };
  if (agentOnly) {
    if (principal.kind !== 'agent' || target === null || principal.runId !== target.runId || principal.agentId !== target.agentId) {
      refuse(`takes only the token of agent ${target?.agentId ?? '?'} of run ${target?.runId ?? '?'}`);
    }
    return;
  }
  if (principal.kind === 'run' || principal.kind === 'agent') {
    if (target === null) refuse(`is not open to a run's key or an agent's token: they act on their own run's results alone`);
    else if (principal.runId !== target.runId) refuse(`acts on run ${target.runId}, not this key's run`);
    else if (target.joining && !(principal.kind === 'run' && principal.joinsAsAgent))
      refuse(`is not open to a run's key or an agent's token: an agent joins with a project's key or a person's`);
    return;
  }
  const role = roleOf(principal) as Role;
  if (!roleAllows(role, needed)) refuse(`needs the role ${needed} (a key of scope ${SCOPE_OF[needed]})`);
}

const SCOPE_OF: Record<Role, string> = { viewer: 'read', member: 'report', admin: 'admin' };

/**
 * A rule inside an operation: some changes need more than the operation (unpinning needs an
 * admin, pinning a member). Run-bound principals never get here with a role to spare.
 */
export function requireRole(scope: Scope, needed: Role, what: string): void {
  const role = roleOf(scope.principal);
  if (role === null || !roleAllows(role, needed))
    throw new HttpError(403, `${what} needs the role ${needed}; this request comes with ${describe(scope.principal)}`);
}
