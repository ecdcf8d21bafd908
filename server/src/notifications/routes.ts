import { z } from 'zod';
import { audited } from '../audit/index.ts';
import type { AppDeps } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { type ReceiverPolicy, systemResolver } from '../outbound/addresses.ts';
import { checkDestination, checkReceiver, shapeAfter, shapeOfNew } from './destinations.ts';
import {
  createDestinationSchema,
  deliveryListQuery,
  deliveryListResponse,
  destinationListQuery,
  destinationListResponse,
  destinationResponse,
  updateDestinationSchema,
} from './schema.ts';
import * as store from './store.ts';

const TAG = 'Notifications';
const PATH = '/api/notification-destinations';

export function notificationRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config } = deps;
  const receivers: ReceiverPolicy = { allow: config.notify.allow, resolve: systemResolver };

  addRoute(ctx, {
    method: 'get',
    path: PATH,
    tag: TAG,
    summary:
      "The project's notification destinations (Slack, Microsoft Teams, webhooks, GitHub, GitLab, email), oldest first; secrets and tokens are never shown",
    query: destinationListQuery,
    response: destinationListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listDestinations(sql, scope.projectId, query.per_page, offsetOf(query.page, query.per_page));
      return { data: { destinations: rows.map(store.presentDestination) }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: PATH,
    tag: TAG,
    summary: 'Add a destination: runs of its environments that end as `when` says are told there',
    body: createDestinationSchema,
    response: destinationResponse,
    status: 201,
    handler: async ({ body, scope }) => {
      await checkDestination(sql, scope.projectId, shapeOfNew(body), config.notify, config.mail !== null);
      await checkReceiver(body.url, receivers);
      const destination = await audited(sql, scope, clock(), async (tx) => {
        const made = store.presentDestination(await store.createDestination(tx, scope.projectId, body, clock()));
        return [made, { action: 'destination.created', target: `destination:${made.id}`, after: made }];
      });
      return { data: { destination } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: `${PATH}/:id`,
    tag: TAG,
    summary: 'Read a destination',
    params: idParams,
    response: destinationResponse,
    handler: async ({ params, scope }) => {
      const destination = await store.getDestination(sql, scope.projectId, params.id);
      if (!destination) throw notFound('notification destination');
      return { data: { destination: store.presentDestination(destination) } };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: `${PATH}/:id`,
    tag: TAG,
    summary: 'Change a destination: the fields given replace its own (its type stays)',
    params: idParams,
    body: updateDestinationSchema,
    response: destinationResponse,
    handler: async ({ params, body, scope }) => {
      await checkReceiver(body.url, receivers);
      const destination = await audited(sql, scope, clock(), async (tx) => {
        const current = await store.getDestination(tx, scope.projectId, params.id);
        if (!current) throw notFound('notification destination');
        await checkDestination(tx, scope.projectId, shapeAfter(current, body), config.notify, config.mail !== null);
        const updated = await store.updateDestination(tx, scope.projectId, params.id, body, clock());
        if (!updated) throw notFound('notification destination');
        const [before, after] = [store.presentDestination(current), store.presentDestination(updated)];
        return [after, { action: 'destination.updated', target: `destination:${after.id}`, before, after }];
      });
      return { data: { destination } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: `${PATH}/:id`,
    tag: TAG,
    summary: 'Remove a destination, and its deliveries',
    params: idParams,
    response: z.object({ success: z.boolean() }),
    handler: async ({ params, scope }) => {
      await audited(sql, scope, clock(), async (tx) => {
        const current = await store.getDestination(tx, scope.projectId, params.id);
        if (!current || !(await store.deleteDestination(tx, scope.projectId, params.id))) throw notFound('notification destination');
        return [null, { action: 'destination.deleted', target: `destination:${current.id}`, before: store.presentDestination(current) }];
      });
      return { success: true };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/notification-deliveries',
    tag: TAG,
    summary: "A run's notifications: one per destination told, with its state, attempts and last error",
    query: deliveryListQuery,
    response: deliveryListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listDeliveries(sql, scope.projectId, query.test_run_id, query.per_page, offsetOf(query.page, query.per_page));
      return { data: { deliveries: rows }, pagination: paginate(total, query.page, query.per_page) };
    },
  });
}
