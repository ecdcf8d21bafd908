import type { AppDeps } from '../context.ts';
import { idParams } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { NotFoundError } from '../errors.ts';
import { requestCommit, runBaselines } from './baselines.ts';
import { actorOf } from '../audit/index.ts';
import { baselineCommitSchema, baselinesResponse, reviewBodySchema, visualChangesResponse } from './schema.ts';
import { z } from 'zod';
import { attachmentUrl, reviewChanges, runVisualChanges } from './service.ts';
import { runOfProject } from './store.ts';

const TAG = 'Visual changes';

export function visualRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { clock } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/visual-changes',
    tag: TAG,
    summary:
      "A run's visual changes (failed screenshot assertions), each with its baseline, new and diff images, the share of changed pixels, the changed areas and its review",
    params: idParams,
    response: visualChangesResponse,
    handler: async ({ params, scope }) => ({ data: await runVisualChanges(deps, scope.projectId, params.id, clock()) }),
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/visual-changes/review',
    needs: 'member',
    tag: TAG,
    summary: 'Approve or reject visual changes of a run: those named by id, or all of them; each is kept with who and when, and audited',
    params: idParams,
    body: reviewBodySchema,
    response: visualChangesResponse,
    handler: async ({ params, body, scope }) => ({
      data: await reviewChanges(deps, scope, params.id, body.ids ?? null, body.review, clock()),
    }),
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/baselines',
    tag: TAG,
    summary:
      "A run's approved screenshots with the paths in the repository where Playwright looks for their baselines, and the commits that wrote them (what `proctor-ci snapshots pull` writes into a checkout)",
    params: idParams,
    response: baselinesResponse,
    handler: async ({ params, scope }) => {
      const now = clock();
      if (!(await runOfProject(deps.sql, scope.projectId, params.id))) throw new NotFoundError('test run not found');
      return { data: await runBaselines(deps.sql, scope.projectId, params.id, (id) => attachmentUrl(deps, id, now)) };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/baselines/commit',
    needs: 'member',
    tag: TAG,
    summary:
      "Queue a commit of the run's approved images that no commit wrote yet (a review that leaves nothing pending queues one by itself): after a refusal since lifted, say",
    params: idParams,
    status: 202,
    response: z.object({ data: z.object({ commit: baselineCommitSchema }) }),
    fails: { 409: 'No approved image is left to commit, or a commit of the run is queued already' },
    handler: async ({ params, scope }) => {
      if (!(await runOfProject(deps.sql, scope.projectId, params.id))) throw new NotFoundError('test run not found');
      const actor = actorOf(scope);
      const by = actor.kind === 'user' || actor.kind === 'key' ? `${actor.kind}:${actor.id}` : actor.kind;
      return { data: { commit: await requestCommit(deps.sql, scope.projectId, params.id, by, clock()) } };
    },
  });
}
