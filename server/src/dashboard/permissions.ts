import { AsyncLocalStorage } from 'node:async_hooks';
import { roleNeededFor } from '../http/route.ts';
import { type Role, roleAllows } from '../principals.ts';

// A page offers only what its person may do: each action is a call of the API, and the API says
// which role each call needs. The role of the person in the page's project is set once around the
// page's rendering, so that every form and section asks the same question the API will.

const pageRole = new AsyncLocalStorage<Role | null>();

/** Renders a page as a person of `role` in its project (null: none, outside a project). */
export function renderAs<T>(role: Role | null, render: () => Promise<T>): Promise<T> {
  return pageRole.run(role, render);
}

/** Whether the page's person may make the call `METHOD /path` (as `apiForm` names it). */
export function mayCall(api: string): boolean {
  const role = pageRole.getStore() ?? null;
  const needed = roleNeededFor(api);
  return role !== null && needed !== null && roleAllows(role, needed);
}
