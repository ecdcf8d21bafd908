import { audited } from '../audit/index.ts';
import type { AppDeps } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { actingUserId } from '../principals.ts';
import { pagesOf } from './compose.ts';
import {
  createLinkSchema,
  deletedResponse,
  linkListQuery,
  linkListResponse,
  linkParams,
  linkResponse,
  putTrackerSettingsSchema,
  settingsResponse,
} from './schema.ts';
import { checkSettings, linkSubject } from './service.ts';
import { systemResolver } from '../outbound/addresses.ts';
import * as store from './store.ts';

const TAG = 'Trackers';

export function trackerRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/tracker-settings',
    tag: TAG,
    summary: "The project's issue tracker: the destination whose repository gets its issues, and the rules that create and follow them; null when it has none",
    response: settingsResponse,
    handler: async ({ scope }) => {
      const row = await store.getSettings(sql, scope.projectId);
      return { data: { tracker_settings: row ? store.presentSettings(row) : null } };
    },
  });

  addRoute(ctx, {
    method: 'put',
    path: '/api/tracker-settings',
    tag: TAG,
    summary:
      "Set the project's issue tracker: a GitHub or GitLab destination (its repository and write-only credential), or a Jira site or a Linear team with their write-only credentials, and the rules",
    body: putTrackerSettingsSchema,
    response: settingsResponse,
    handler: async ({ body, scope }) => {
      const settings = await audited(sql, scope, clock(), async (tx) => {
        await checkSettings(tx, scope.projectId, body, { allow: config.notify.allow, resolve: systemResolver });
        const before = await store.getSettings(tx, scope.projectId);
        const after = store.presentSettings(await store.putSettings(tx, scope.projectId, body, clock()));
        return [after, { action: 'tracker.settings', target: 'tracker', before: before ? store.presentSettings(before) : null, after }];
      });
      return { data: { tracker_settings: settings } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/tracker-settings',
    tag: TAG,
    summary: "Remove the project's issue tracker: no issue is created or followed any more (the links stay, and the issues)",
    response: deletedResponse,
    handler: async ({ scope }) => {
      await audited(sql, scope, clock(), async (tx) => {
        const before = await store.getSettings(tx, scope.projectId);
        if (!before || !(await store.deleteSettings(tx, scope.projectId))) throw notFound('tracker settings');
        return [null, { action: 'tracker.removed', target: 'tracker', before: store.presentSettings(before) }];
      });
      return { data: { success: true } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/tracker-links',
    tag: TAG,
    summary: "The project's links of failure groups and tests to tracker issues, newest first, with each issue's state and the latest action on it",
    query: linkListQuery,
    response: linkListResponse,
    handler: async ({ query, scope }) => {
      const kind = query.failure_group_id ? 'failure_group' : query.test_case_id ? 'test' : undefined;
      const { rows, total } = await store.listLinks(sql, scope.projectId, {
        kind,
        subjectId: query.failure_group_id ?? query.test_case_id,
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      return { data: { tracker_links: rows.map(store.presentLink) }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/tracker-links',
    needs: 'member',
    tag: TAG,
    summary:
      'Link a failure group or a test to an issue: an existing one (`issue`: its URL or number), or one Proctor creates with its error, history, failing runs and a link back; 409 when it has a link',
    body: createLinkSchema,
    response: linkResponse,
    status: 201,
    handler: async ({ body, scope }) => {
      const link = await audited(sql, scope, clock(), async (tx) => {
        const subject = body.failure_group_id
          ? { kind: 'failure_group' as const, id: body.failure_group_id }
          : { kind: 'test' as const, id: body.test_case_id as string };
        const made = await linkSubject(tx, scope.projectId, subject, body.issue, actingUserId(scope), pagesOf(config.publicUrl, scope.projectId), clock());
        const shown = store.presentLink((await store.getLink(tx, scope.projectId, made.id)) ?? made);
        return [shown, { action: 'tracker.linked', target: `tracker-link:${shown.id}`, after: shown }];
      });
      return { data: { tracker_link: link } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/tracker-links/:id',
    tag: TAG,
    summary: 'Read a link, its issue and the latest action on it',
    params: linkParams,
    response: linkResponse,
    handler: async ({ params, scope }) => {
      const link = await store.getLink(sql, scope.projectId, params.id);
      if (!link) throw notFound('tracker link');
      return { data: { tracker_link: store.presentLink(link) } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/tracker-links/:id',
    needs: 'member',
    tag: TAG,
    summary: 'Unlink: the issue stays on the tracker, untouched; Proctor no longer follows it',
    params: linkParams,
    response: deletedResponse,
    handler: async ({ params, scope }) => {
      await audited(sql, scope, clock(), async (tx) => {
        const link = await store.getLink(tx, scope.projectId, params.id);
        if (!link || !(await store.deleteLink(tx, scope.projectId, params.id))) throw notFound('tracker link');
        return [null, { action: 'tracker.unlinked', target: `tracker-link:${link.id}`, before: store.presentLink(link) }];
      });
      return { data: { success: true } };
    },
  });
}
