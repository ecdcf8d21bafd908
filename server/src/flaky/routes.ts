import type { AppDeps } from '../context.ts';
import { audited } from '../audit/index.ts';
import { escapeLike } from '../db.ts';
import { getEnvironment } from '../environments/index.ts';
import { HttpError } from '../http/errors.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { rankedFlakyTests } from './ranked.ts';
import { WINDOW_DAYS } from './window.ts';
import {
  flakyTestsQuery,
  flakyTestsResponse,
  quarantineEventsQuery,
  quarantineEventsResponse,
  quarantinePolicyResponse,
  quarantinePolicyUpdateSchema,
} from './schema.ts';
import * as store from './store.ts';

const TAG = 'Flaky tests';

export function flakyRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  const checkEnvironment = async (projectId: number, environmentId: number | undefined) => {
    if (environmentId !== undefined && !(await getEnvironment(sql, projectId, environmentId))) {
      throw new HttpError(404, `query.environment_id: environment ${environmentId} not found`);
    }
  };

  addRoute(ctx, {
    method: 'get',
    path: '/api/flaky-tests',
    tag: TAG,
    summary: `Each test's flakiness score and class per environment over the last ${WINDOW_DAYS} days (or days), highest score first`,
    query: flakyTestsQuery,
    response: flakyTestsResponse,
    handler: async ({ query, scope }) => {
      await checkEnvironment(scope.projectId, query.environment_id);
      const { rows, total } = await rankedFlakyTests(sql, scope.projectId, query.days, {
        environmentId: query.environment_id,
        class: query.class,
        early: query.early === 'true',
        search: query.search ? `%${escapeLike(query.search.toLowerCase())}%` : null,
        owner: query.owner ?? null,
        now: clock(),
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      const tests = rows.map((row) => ({ ...row, runs_needed: store.runsNeeded(row) }));
      return { data: { tests }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/quarantine-policy',
    tag: TAG,
    summary: "The project's quarantine policy (the defaults until one is set)",
    response: quarantinePolicyResponse,
    handler: async ({ scope }) => ({ data: { policy: await store.getPolicy(sql, scope.projectId) } }),
  });

  addRoute(ctx, {
    method: 'put',
    path: '/api/quarantine-policy',
    tag: TAG,
    summary: "Set the project's quarantine policy: the fields given replace the policy's, the others stay",
    body: quarantinePolicyUpdateSchema,
    response: quarantinePolicyResponse,
    handler: async ({ body, scope }) => {
      const policy = await audited(sql, scope, clock(), async (tx) => {
        const before = await store.getPolicy(tx, scope.projectId);
        const after = await store.putPolicy(tx, scope.projectId, { ...before, ...body }, clock());
        return [after, { action: 'quarantine_policy.updated', target: `project:${scope.projectId}`, before, after }];
      });
      return { data: { policy } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/quarantine-events',
    tag: TAG,
    summary: 'Every quarantine and release the policy made, newest first, with its reason',
    query: quarantineEventsQuery,
    response: quarantineEventsResponse,
    handler: async ({ query, scope }) => {
      await checkEnvironment(scope.projectId, query.environment_id);
      const { rows, total } = await store.listEvents(sql, scope.projectId, {
        environmentId: query.environment_id,
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      const events = rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
      return { data: { events }, pagination: paginate(total, query.page, query.per_page) };
    },
  });
}
