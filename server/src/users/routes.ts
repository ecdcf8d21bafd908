import { z } from 'zod';
import type { Sql } from '../db.ts';
import { notFound } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { userParams, userSchema } from './schema.ts';
import { getUserInProject } from './store.ts';

export function userRoutes(ctx: RouteContext, sql: Sql): void {
  addRoute(ctx, {
    method: 'get',
    path: '/api/users/:id',
    tag: 'Users',
    summary: 'Read a user of the project, with connected chat and scm accounts',
    params: userParams,
    response: z.object({ data: userSchema }),
    handler: async ({ params, scope }) => {
      const user = await getUserInProject(sql, scope.projectId, params.id);
      if (!user) throw notFound('user');
      return { data: user };
    },
  });
}
