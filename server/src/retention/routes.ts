import type { AppDeps } from '../context.ts';
import { audited } from '../audit/index.ts';
import { InvalidInputError } from '../errors.ts';
import { notFound } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { getRun, presentRun, setPinned } from '../runs/index.ts';
import { pinResponse, retentionPolicyResponse, retentionPolicyUpdateSchema } from './schema.ts';
import { serverPolicy } from './policy.ts';
import * as store from './store.ts';

const TAG = 'Retention';

export function retentionRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config, signingSecret } = deps;
  const defaults = serverPolicy(config);

  addRoute(ctx, {
    method: 'get',
    path: '/api/retention-policy',
    tag: TAG,
    summary: "How long the project keeps its runs' results and attachments (the server's defaults until it sets its own)",
    response: retentionPolicyResponse,
    handler: async ({ scope }) => ({ data: { policy: await store.getPolicy(sql, scope.projectId, defaults) } }),
  });

  addRoute(ctx, {
    method: 'put',
    path: '/api/retention-policy',
    tag: TAG,
    summary: "Set the project's retention policy: the fields given replace the policy's, the others stay; the next pass deletes what it expires",
    body: retentionPolicyUpdateSchema,
    response: retentionPolicyResponse,
    handler: async ({ body, scope }) => {
      const policy = await audited(sql, scope, clock(), async (tx) => {
        const before = await store.getPolicy(tx, scope.projectId, defaults);
        const merged = { ...before, ...body };
        if (merged.artifacts_days > merged.results_days) {
          const field = body.artifacts_days === undefined ? 'results_days' : 'artifacts_days';
          throw new InvalidInputError(
            `body.${field}: artifacts_days (${merged.artifacts_days}) must not be more than results_days (${merged.results_days}): attachments are never kept longer than results`,
          );
        }
        const after = await store.putPolicy(tx, scope.projectId, merged, clock());
        return [after, { action: 'retention_policy.updated', target: `project:${scope.projectId}`, before, after }];
      });
      return { data: { policy } };
    },
  });

  for (const [method, pinned] of [
    ['post', true],
    ['delete', false],
  ] as const) {
    addRoute(ctx, {
      method,
      path: '/api/test-runs/:id/pin',
      // CI pins a release run; only an admin lets retention take one back.
      needs: pinned ? 'member' : 'admin',
      tag: TAG,
      summary: pinned
        ? 'Pin a run: it keeps its results and attachments whatever the retention policy, until unpinned'
        : 'Unpin a run: the retention policy applies to it again',
      params: idParams,
      response: pinResponse,
      handler: async ({ params, scope }) => {
        await audited(sql, scope, clock(), async (tx) => {
          if (!(await setPinned(tx, scope.projectId, params.id, pinned))) throw notFound('test run');
          return [null, { action: pinned ? 'run.pinned' : 'run.unpinned', target: `run:${params.id}`, after: { pinned } }];
        });
        const run = await getRun(sql, scope.projectId, params.id);
        if (!run) throw notFound('test run');
        return { data: { test_run: presentRun(run, config.publicUrl, signingSecret, clock()) } };
      },
    });
  }
}
