import { actingUserId } from '../http/access.ts';
import type { AppDeps } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { foldMembers } from './members.ts';
import {
  attachSchema,
  groupListQuery,
  groupListResponse,
  groupParams,
  groupResponse,
  groupWithMembersResponse,
  memberParams,
  memberResponse,
  updateGroupSchema,
} from './schema.ts';
import { attachMember, detachMember, updateGroup } from './service.ts';
import * as store from './store.ts';

const TAG = 'Failure groups';

export function failureGroupRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'post',
    path: '/api/failure-groups/:id/members',
    needs: 'member',
    run: ({ body }) => body.test_run_id,
    tag: TAG,
    summary: "Attach a run's failing test to a failure group (created on first attach); idempotent per run and test",
    params: groupParams,
    body: attachSchema,
    response: memberResponse,
    handler: async ({ params, body, scope }) => {
      const testCaseId = (body.test_case_id ?? body.pw_test_id) as string;
      return { data: { member: await attachMember(sql, scope, params.id, body.test_run_id, testCaseId, clock()) } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/failure-groups/:id/members/:test_case_id',
    needs: 'member',
    tag: TAG,
    summary: 'Detach a member; a machine attach does not bring back what a human detached',
    params: memberParams,
    response: memberResponse,
    handler: async ({ params, scope }) => ({ data: { member: await detachMember(sql, scope, params.id, params.test_case_id, clock()) } }),
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/failure-groups',
    tag: TAG,
    summary: 'List failure groups, most recently seen first',
    query: groupListQuery,
    response: groupListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listGroups(sql, scope.projectId, {
        status: query.status,
        owner: query.owner,
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      return { data: { failure_groups: rows }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/failure-groups/:id',
    tag: TAG,
    summary: 'Read a failure group with its members',
    params: groupParams,
    response: groupWithMembersResponse,
    handler: async ({ params, scope }) => {
      const group = await store.getGroup(sql, scope.projectId, params.id);
      if (!group) throw notFound('failure group');
      const members = foldMembers(await store.memberEvents(sql, scope.projectId, params.id));
      return { data: { failure_group: group, members } };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: '/api/failure-groups/:id',
    needs: 'member',
    tag: TAG,
    summary: "Rename the group, or set its triage diagnosis (the author is the key's user) or its status",
    params: groupParams,
    body: updateGroupSchema,
    response: groupResponse,
    handler: async ({ params, body, scope }) => {
      const now = clock();
      const diagnosis = body.diagnosis ? { ...body.diagnosis, author: actingUserId(scope) ?? 'machine', created_at: now.toISOString() } : undefined;
      const group = await updateGroup(sql, scope.projectId, params.id, { title: body.title, status: body.status, diagnosis }, now);
      return { data: { failure_group: group } };
    },
  });
}
