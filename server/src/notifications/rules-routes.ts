import { z } from 'zod';
import { audited } from '../audit/index.ts';
import type { AppDeps } from '../context.ts';
import type { Tx } from '../db.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { notFound } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import {
  createOwnerRouteSchema,
  createSubscriptionSchema,
  ownerRouteListQuery,
  ownerRouteListResponse,
  ownerRouteResponse,
  READ_BY_PEOPLE,
  subscriptionListQuery,
  subscriptionListResponse,
  subscriptionResponse,
  updateSubscriptionSchema,
} from './rules-schema.ts';
import * as store from './rules-store.ts';
import { nextDue } from './schedule.ts';

// Digest subscriptions and owners' routing rules: a project's admins set them, its viewers read them.

const TAG = 'Notifications';
const SUBSCRIPTIONS = '/api/digest-subscriptions';
const ROUTES = '/api/owner-routes';

/** The destination is the project's and people read it (Slack, Teams, mail). */
async function checkReadDestination(tx: Tx, projectId: number, destinationId: number): Promise<void> {
  const type = await store.destinationType(tx, projectId, destinationId);
  if (type === null) throw new InvalidInputError(`body.destination_id: no notification destination ${destinationId} in this project`);
  if (!(READ_BY_PEOPLE as readonly string[]).includes(type))
    throw new InvalidInputError(
      `body.destination_id: a ${type} destination takes run endings only; digests and owners' failures go to ${READ_BY_PEOPLE.join(', ')}`,
    );
}

/** A weekly digest has a weekday, a daily one none. */
function weekdayOf(period: 'day' | 'week', weekday: number | undefined | null): number | null {
  if (period === 'day') {
    if (weekday !== undefined && weekday !== null) throw new InvalidInputError('body.weekday: only a weekly digest has a weekday');
    return null;
  }
  if (weekday === undefined || weekday === null) throw new InvalidInputError('body.weekday: required for a weekly digest (1 Monday … 7 Sunday)');
  return weekday;
}

export function notificationRuleRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'get',
    path: SUBSCRIPTIONS,
    tag: TAG,
    summary: "The project's digest subscriptions: which environment's daily or weekly digest goes to which destination, when, and how the latest went",
    query: subscriptionListQuery,
    response: subscriptionListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listSubscriptions(sql, scope.projectId, query.per_page, offsetOf(query.page, query.per_page));
      return { data: { subscriptions: rows.map(store.presentSubscription) }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: SUBSCRIPTIONS,
    tag: TAG,
    summary:
      "Subscribe a Slack, Teams or email destination to an environment's daily or weekly digest, sent at an hour (and weekday) of a time zone; one per destination, environment and period",
    body: createSubscriptionSchema,
    response: subscriptionResponse,
    status: 201,
    handler: async ({ body, scope }) => {
      const weekday = weekdayOf(body.period, body.weekday);
      const now = clock();
      const subscription = await audited(sql, scope, now, async (tx) => {
        if (!(await store.environmentExists(tx, scope.projectId, body.environment_id)))
          throw new InvalidInputError(`body.environment_id: no environment ${body.environment_id} in this project`);
        await checkReadDestination(tx, scope.projectId, body.destination_id);
        const id = await store.createSubscription(tx, scope.projectId, { ...body, weekday }, nextDue({ ...body, weekday }, now), now);
        if (id === null)
          throw new ConflictError(`destination ${body.destination_id} already has this environment's ${body.period === 'day' ? 'daily' : 'weekly'} digest`);
        const made = store.presentSubscription((await store.getSubscription(tx, scope.projectId, id)) as store.StoredSubscription);
        return [made, { action: 'digest_subscription.created', target: `digest_subscription:${id}`, after: made }];
      });
      return { data: { subscription } };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: `${SUBSCRIPTIONS}/:id`,
    tag: TAG,
    summary: 'Change when a digest is sent: its hour, weekday or time zone (its next moment follows)',
    params: idParams,
    body: updateSubscriptionSchema,
    response: subscriptionResponse,
    handler: async ({ params, body, scope }) => {
      const now = clock();
      const subscription = await audited(sql, scope, now, async (tx) => {
        const current = await store.getSubscription(tx, scope.projectId, params.id);
        if (!current) throw notFound('digest subscription');
        const change = {
          hour: body.hour ?? current.hour,
          weekday: weekdayOf(current.period, body.weekday ?? current.weekday),
          time_zone: body.time_zone ?? current.time_zone,
        };
        await store.updateSubscription(tx, scope.projectId, params.id, change, nextDue({ ...change, period: current.period }, now), now);
        const [before, after] = [store.presentSubscription(current), store.presentSubscription((await store.getSubscription(tx, scope.projectId, params.id))!)];
        return [after, { action: 'digest_subscription.updated', target: `digest_subscription:${params.id}`, before, after }];
      });
      return { data: { subscription } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: `${SUBSCRIPTIONS}/:id`,
    tag: TAG,
    summary: 'Remove a digest subscription, and its digests in the outbox',
    params: idParams,
    response: z.object({ success: z.boolean() }),
    handler: async ({ params, scope }) => {
      await audited(sql, scope, clock(), async (tx) => {
        const current = await store.getSubscription(tx, scope.projectId, params.id);
        if (!current || !(await store.deleteSubscription(tx, scope.projectId, params.id))) throw notFound('digest subscription');
        return [null, { action: 'digest_subscription.deleted', target: `digest_subscription:${params.id}`, before: store.presentSubscription(current) }];
      });
      return { success: true };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: ROUTES,
    tag: TAG,
    summary: "The project's owners' routing rules: an owner (or a glob of owners) whose failed tests are also told to a destination",
    query: ownerRouteListQuery,
    response: ownerRouteListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listOwnerRoutes(sql, scope.projectId, query.per_page, offsetOf(query.page, query.per_page));
      return { data: { routes: rows }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: ROUTES,
    tag: TAG,
    summary:
      "Route an owner's failures to a Slack, Teams or email destination: a failed run's failed tests that owner owns are told there, only theirs, once per run",
    body: createOwnerRouteSchema,
    response: ownerRouteResponse,
    status: 201,
    handler: async ({ body, scope }) => {
      const route = await audited(sql, scope, clock(), async (tx) => {
        await checkReadDestination(tx, scope.projectId, body.destination_id);
        const made = await store.createOwnerRoute(tx, scope.projectId, body.owner, body.destination_id, clock());
        if (!made) throw new ConflictError(`${body.owner} already routes to destination ${body.destination_id}`);
        return [made, { action: 'owner_route.created', target: `owner_route:${made.id}`, after: made }];
      });
      return { data: { route } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: `${ROUTES}/:id`,
    tag: TAG,
    summary: "Remove an owner's routing rule",
    params: idParams,
    response: z.object({ success: z.boolean() }),
    handler: async ({ params, scope }) => {
      await audited(sql, scope, clock(), async (tx) => {
        const removed = await store.deleteOwnerRoute(tx, scope.projectId, params.id);
        if (!removed) throw notFound('owner route');
        return [null, { action: 'owner_route.deleted', target: `owner_route:${params.id}`, before: removed }];
      });
      return { success: true };
    },
  });
}
