import type { AppDeps } from '../context.ts';
import { idParams } from '../http/fields.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { addTestIdsSchema, createSnoozeSchema, snoozeListQuery, snoozeListResponse, snoozeResponse, updateSnoozeSchema } from './schema.ts';
import { addTestsToSnooze, changeSnooze, deleteSnoozeOf, listSnoozesOf, snoozeTests } from './service.ts';

const TAG = 'Snoozes';

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
      const { rows, total } = await listSnoozesOf(
        sql,
        scope.projectId,
        {
          status: query.status,
          environmentId: query.environment_id,
          environmentSlug: query.environment,
          limit: query.per_page,
          offset: offsetOf(query.page, query.per_page),
        },
        clock(),
      );
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
      const snooze = await changeSnooze(
        sql,
        scope,
        params.id,
        {
          expireNow: body.expire_now === true,
          until: body.snooze_until === undefined ? undefined : new Date(body.snooze_until),
          description: body.description,
          environmentId: body.scoped_to_environment_id,
          testIds: body.test_ids,
        },
        clock(),
      );
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
      const snooze = await addTestsToSnooze(sql, scope, params.id, body.test_ids, clock());
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
      const snooze = await deleteSnoozeOf(sql, scope, params.id, clock());
      return { data: { snooze } };
    },
  });
}
