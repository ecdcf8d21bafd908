import type { Sql } from '../db.ts';
import { createListedKey, type ListedKey, listKeys, revokeKey } from '../auth/index.ts';
import { notFound } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { removeMember } from '../projects/index.ts';
import { createdKeyResponse, createKeySchema, keyListResponse, keyParams, memberParams, successResponse } from './schema.ts';

const TAG = 'Keys and members';

const present = <K extends ListedKey>(key: K) => ({ ...key, created_at: key.created_at.toISOString() });

/** The project's keys and members, for its admins: a key of scope admin. */
export function keyRoutes(ctx: RouteContext, sql: Sql): void {
  addRoute(ctx, {
    method: 'get',
    path: '/api/keys',
    tag: TAG,
    summary: "List the project's keys (ids and scopes, never secrets)",
    needs: 'admin',
    response: keyListResponse,
    handler: async ({ scope }) => ({ data: { keys: (await listKeys(sql, { projectId: scope.projectId })).map(present) } }),
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/keys',
    tag: TAG,
    summary: 'Create a project key of a scope; the whole key is in this answer only',
    needs: 'admin',
    body: createKeySchema,
    status: 201,
    response: createdKeyResponse,
    handler: async ({ body, scope }) => {
      const created = await createListedKey(sql, { projectId: scope.projectId }, body.scope);
      return { data: { key: present(created) } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/keys/:id',
    tag: TAG,
    summary: 'Revoke a project key: it stops working at once',
    params: keyParams,
    response: successResponse,
    handler: async ({ params, scope }) => {
      if (!(await revokeKey(sql, { projectId: scope.projectId }, params.id))) throw notFound('key');
      return { data: { success: true } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/members/:user_id',
    tag: TAG,
    summary: 'Remove a user from the project; their personal key no longer reaches it',
    params: memberParams,
    response: successResponse,
    handler: async ({ params, scope }) => {
      if (!(await removeMember(sql, scope.projectId, params.user_id))) throw notFound('member');
      return { data: { success: true } };
    },
  });
}
