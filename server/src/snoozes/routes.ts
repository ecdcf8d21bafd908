import { audited } from '../audit/index.ts';
import type { Scope } from '../http/access.ts';
import type { AppDeps } from '../context.ts';
import type { Tx } from '../db.ts';
import { getEnvironment, getEnvironmentBySlug } from '../environments/index.ts';
import { HttpError, notFound, ValidationError } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { addTestIdsSchema, createSnoozeSchema, snoozeListQuery, snoozeListResponse, snoozeResponse, updateSnoozeSchema } from './schema.ts';
import { snoozeTests } from './service.ts';
import * as store from './store.ts';

const TAG = 'Snoozes';

async function checkEnvironment(sql: Tx, scope: Scope, environmentId: number | null | undefined): Promise<void> {
  if (environmentId == null) return;
  if (!(await getEnvironment(sql, scope.projectId, environmentId))) {
    throw new HttpError(404, `body.scoped_to_environment_id: environment ${environmentId} not found`);
  }
}

/** The environment a list asks for, by id or by slug (as a reporter knows it). */
async function environmentOfQuery(sql: Tx, projectId: number, query: { environment_id?: number; environment?: string }): Promise<number | undefined> {
  if (query.environment === undefined) return query.environment_id;
  if (query.environment_id !== undefined) throw new ValidationError('query.environment: give environment or environment_id, not both');
  const environment = await getEnvironmentBySlug(sql, projectId, query.environment);
  if (!environment) throw new HttpError(404, `query.environment: environment ${JSON.stringify(query.environment)} not found`);
  return environment.id;
}

function futureDate(value: string, now: Date, field: string): Date {
  const date = new Date(value);
  if (date <= now) throw new ValidationError(`body.${field}: must be in the future`);
  return date;
}

export function snoozeRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'post',
    path: '/api/snoozes',
    needs: 'member',
    tag: TAG,
    summary: 'Snooze known failures until a time, in one environment or all',
    body: createSnoozeSchema,
    response: snoozeResponse,
    handler: async ({ body, scope }) => {
      const snooze = await snoozeTests(
        sql,
        scope,
        {
          testIds: body.test_ids,
          until: new Date(body.snooze_until),
          description: body.description ?? null,
          environmentId: body.scoped_to_environment_id ?? null,
          createdFromRunId: body.created_from_test_run_id ?? null,
        },
        clock(),
        { until: 'body.snooze_until', environment: 'body.scoped_to_environment_id', run: 'body.created_from_test_run_id' },
      );
      return { data: { snooze } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/snoozes',
    tag: TAG,
    summary: 'List snoozes: active (default), expired or all',
    query: snoozeListQuery,
    response: snoozeListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listSnoozes(sql, scope.projectId, {
        status: query.status,
        environmentId: await environmentOfQuery(sql, scope.projectId, query),
        now: clock(),
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      return { data: { snoozes: rows }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: '/api/snoozes/:id',
    needs: 'member',
    tag: TAG,
    summary: 'Update a snooze; expire_now ends it at once',
    params: idParams,
    body: updateSnoozeSchema,
    response: snoozeResponse,
    handler: async ({ params, body, scope }) => {
      const now = clock();
      if (body.expire_now && body.snooze_until !== undefined) {
        throw new ValidationError('body.expire_now: cannot be combined with snooze_until');
      }
      await checkEnvironment(sql, scope, body.scoped_to_environment_id);
      const snooze = await audited(sql, scope, now, async (tx) => {
        const after = await store.updateSnooze(
          tx,
          scope.projectId,
          params.id,
          {
            snooze_until: body.expire_now ? now : body.snooze_until !== undefined ? futureDate(body.snooze_until, now, 'snooze_until') : undefined,
            description: body.description,
            scoped_to_environment_id: body.scoped_to_environment_id,
            test_ids: body.test_ids,
          },
          now,
        );
        if (!after) throw notFound('snooze');
        return [after, { action: 'snooze.updated', target: `snooze:${after.id}`, after }];
      });
      return { data: { snooze } };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/snoozes/:id/test-ids',
    needs: 'member',
    tag: TAG,
    summary: 'Add test ids to a snooze (as a set)',
    params: idParams,
    body: addTestIdsSchema,
    response: snoozeResponse,
    handler: async ({ params, body, scope }) => {
      const snooze = await audited(sql, scope, clock(), async (tx) => {
        const after = await store.addSnoozeTestIds(tx, scope.projectId, params.id, body.test_ids, clock());
        if (!after) throw notFound('snooze');
        return [after, { action: 'snooze.updated', target: `snooze:${after.id}`, after }];
      });
      return { data: { snooze } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/snoozes/:id',
    needs: 'member',
    tag: TAG,
    summary: 'Delete a snooze permanently; returns it',
    params: idParams,
    response: snoozeResponse,
    handler: async ({ params, scope }) => {
      const snooze = await audited(sql, scope, clock(), async (tx) => {
        const before = await store.deleteSnooze(tx, scope.projectId, params.id);
        if (!before) throw notFound('snooze');
        return [before, { action: 'snooze.deleted', target: `snooze:${before.id}`, before }];
      });
      return { data: { snooze } };
    },
  });
}
