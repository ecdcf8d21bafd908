import { actorOf, recordChange } from '../audit/index.ts';
import { createListedKey, type ListedKey, listKeys, revokeKey } from '../auth/index.ts';
import type { AppDeps } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { actingUserId } from '../principals.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { createdKeyResponse, createKeySchema, keyListResponse, keyParams, successResponse } from './schema.ts';

const TAG = 'Keys';

const present = <K extends ListedKey>(key: K) => ({ ...key, created_at: key.created_at.toISOString(), last_used_at: key.last_used_at?.toISOString() ?? null });

/** The project's keys, for its admins. */
export function keyRoutes(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock'>): void {
  const { sql, clock } = deps;
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
      const created = await sql.begin(async (tx) => {
        const made = await createListedKey(tx, { projectId: scope.projectId }, body.scope, actingUserId(scope), body.name ?? null);
        const { key: _secret, ...listed } = present(made);
        await recordChange(tx, { projectId: scope.projectId, actor: actorOf(scope), action: 'key.created', target: `key:${made.id}`, after: listed }, clock());
        return made;
      });
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
      await sql.begin(async (tx) => {
        const [before] = await listKeys(tx, { projectId: scope.projectId }, params.id);
        if (!before || !(await revokeKey(tx, { projectId: scope.projectId }, params.id))) throw notFound('key');
        await recordChange(
          tx,
          { projectId: scope.projectId, actor: actorOf(scope), action: 'key.revoked', target: `key:${params.id}`, before: present(before) },
          clock(),
        );
      });
      return { data: { success: true } };
    },
  });
}
