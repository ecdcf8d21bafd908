import { ForbiddenError } from './errors.ts';

// Who acts, and what they may do. People have a role in each project; keys have a scope; a run's
// key and an agent's token are bound to their run (and agent). The three rungs line up: a viewer
// does what a read key does, a member what a report key does, an admin what an admin key does.

/** What a key may do, each including the ones before it. */
export const KEY_SCOPES = ['read', 'report', 'admin'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** A person's part in a project, each including the ones before it. */
export const ROLES = ['viewer', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** The role a key of this scope acts with. */
export function roleOfScope(scope: KeyScope): Role {
  return ROLES[KEY_SCOPES.indexOf(scope)] as Role;
}

/** Whether `held` includes `needed`. */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/** The lesser of two roles: a personal key never does more than its person's role. */
export function lesserRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b;
}

export type Principal =
  /** A project key: a machine (CI), with its scope. */
  | { kind: 'project'; keyId: string; scope: KeyScope }
  /** A person: by a personal key (`keyId`) or a dashboard session (`keyId` null), with the role they act with here. */
  | { kind: 'user'; keyId: string | null; userId: string; role: Role }
  /**
   * The key a run hands its tests' reporter: its own run only. `joinsAsAgent`: the executor's key
   * to serve a run of agents, the one run's key that may also join its run as an agent.
   */
  | { kind: 'run'; keyId: string; runId: number; joinsAsAgent: boolean }
  /** An agent's token: its run's results, and its own agent's heartbeats, leases and plan. */
  | { kind: 'agent'; keyId: string; runId: number; agentId: number };

/** A person behind a request, before any project: a session (no key scope) or a personal key. */
export interface Person {
  userId: string;
  keyScope: KeyScope | null;
}

/** Who is asking, and for which project: every API request is scoped to one. */
export interface Scope {
  projectId: number;
  principal: Principal;
}

/** The role a principal acts with in its project; null for the run-bound ones. */
export function roleOf(principal: Principal): Role | null {
  if (principal.kind === 'project') return roleOfScope(principal.scope);
  if (principal.kind === 'user') return principal.role;
  return null;
}

/** The user behind a personal key or a session, or null for a machine. */
export function actingUserId(scope: Scope): string | null {
  return scope.principal.kind === 'user' ? scope.principal.userId : null;
}

/** A body `project_id` is legacy: when set, it must be the project the request is scoped to. */
export function checkLegacyProjectId(scope: Scope, projectId: number | undefined): void {
  if (projectId !== undefined && projectId !== scope.projectId) {
    throw new ForbiddenError(`body.project_id: ${projectId} is not the project of this request (${scope.projectId})`);
  }
}
