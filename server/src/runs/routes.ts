import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { actorOf } from '../audit/index.ts';
import { notFound } from '../http/errors.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { OPTIONAL_ATTEMPT_FIELDS, OPTIONAL_FINAL_FIELDS } from '@proctor/reporter/wire';
import { getProject } from '../projects/index.ts';
import { runDetails } from './details.ts';
import { beginShard, endShard } from './ingest.ts';
import { failFast, STOPPED_BY_FAILURES } from './fail-fast.ts';
import { resultWriter } from './group-commit.ts';
import { presentRun } from './present.ts';
import { actingUserId } from '../http/access.ts';
import { cancelRun } from './finish.ts';
import { startReportRun } from './report.ts';
import { triggerRun } from './trigger.ts';
import {
  cancelSchema,
  isTerminal,
  triggerResponse,
  triggerSchema,
  reportRunSchema,
  resultBatchResponse,
  resultBatchSchema,
  runListQuery,
  runListResponse,
  runParams,
  runReadResponse,
  runStateResponse,
  RUN_NUMBER,
  shardBeginSchema,
  shardEndSchema,
  shardParams,
} from './schema.ts';
import * as store from './store.ts';
import { resultsIngested } from '../metrics.ts';

const TAG = 'Test runs';

const REPORTING = 'Reporting (used by the Playwright reporter)';

export function runRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config, signingSecret } = deps;
  const present = (row: store.RunRow) => presentRun(row, config.publicUrl, signingSecret, clock());
  const results = resultWriter(sql, config.groupCommit);
  const stopAtFailureLimit = failFast(sql);

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs',
    tag: TAG,
    summary: 'List runs, newest first, by environment, state, branch and owner',
    query: runListQuery,
    response: runListResponse,
    handler: async ({ query, scope }) => {
      const { rows, total } = await store.listRuns(sql, scope.projectId, {
        environment: query.environment,
        states: query.state ? query.state.split(',') : [],
        branch: query.branch,
        owner: query.owner,
        limit: query.per_page,
        offset: offsetOf(query.page, query.per_page),
      });
      return { data: { test_runs: rows.map(present) }, pagination: paginate(total, query.page, query.per_page) };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id',
    // A run's key and its agents read their own run (an agent learns of its end so).
    run: ({ params }) => params.id,
    tag: TAG,
    summary: 'Read a run with its results and project',
    params: runParams,
    response: runReadResponse,
    handler: async ({ params, scope }) => {
      const run = await store.getRun(sql, scope.projectId, params.id);
      if (!run) throw notFound('test run');
      const project = await getProject(sql, scope.projectId);
      if (!project) throw notFound('project');
      const flattenedSummaryDetails = await runDetails(sql, deps, run.id, clock());
      return {
        data: {
          test_run: {
            project: { id: project.id, name: project.name, repo_name: project.repo_name },
            testRun: present(run),
            flattenedSummaryDetails,
          },
        },
      };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/state',
    // A run's key reads its own run's state: a suite's reporter asks it while its tests run.
    run: ({ params }) => params.id,
    tag: REPORTING,
    summary:
      "The run's state and who cancelled it, which a reporter asks every second while its tests run: a cancel (fail fast's, another shard's) stops its Playwright at once; reads only",
    params: runParams,
    response: runStateResponse,
    handler: async ({ params, scope }) => {
      const run = await store.getRunState(sql, scope.projectId, params.id);
      if (!run) throw notFound('test run');
      return { data: { test_run: run } };
    },
  });

  addRoute(ctx, {
    method: 'put',
    path: '/api/test-runs',
    needs: 'member',
    tag: TAG,
    summary: 'Trigger a run against an environment: it is queued (pending) for an executor',
    body: triggerSchema,
    response: triggerResponse,
    handler: async ({ body, scope }) => {
      const run = await triggerRun(sql, deps.branches, scope, body, clock());
      return {
        data: {
          trigger: { success: true },
          test_run: { id: run.id, state: run.state, test_run_branch: run.test_run_branch, created_at: run.created_at.toISOString() },
        },
      };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/cancel',
    needs: 'member',
    tag: TAG,
    summary: 'Cancel a run that has not ended (412 when it has): its Playwright processes are stopped',
    params: runParams,
    body: cancelSchema,
    response: z.object({ message: z.string() }),
    handler: async ({ params, body, scope, res }) => {
      const cancelledBy = actingUserId(scope) ?? `key:${scope.principal.keyId}`;
      await cancelRun(sql, scope.projectId, params.id, body.reason ?? null, cancelledBy, clock());
      deps.jobs?.runEnded();
      await deps.jobs?.stopRun(params.id, res.locals.requestId as string | undefined);
      return { message: `test run ${params.id} cancelled` };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/report',
    needs: 'member',
    tag: REPORTING,
    summary: 'Start (or join, by run_key) a report-only run: the reporter in your own CI, without a trigger',
    body: reportRunSchema,
    response: z.object({
      data: z.object({ test_run: z.object({ id: z.number().int(), number: RUN_NUMBER }) }),
    }),
    handler: async ({ body, scope }) => {
      const run = await startReportRun(sql, scope.projectId, body, clock(), actorOf(scope));
      return { data: { test_run: { id: run.id, number: run.number } } };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/shards/:shard/begin',
    needs: 'member',
    run: ({ params }) => params.id,
    tag: REPORTING,
    summary: 'A shard begins: its list of tests and the commit; the run is running',
    params: shardParams,
    body: shardBeginSchema,
    response: z.object({
      data: z.object({
        success: z.boolean(),
        accepts_final_fields: z
          .array(z.enum(OPTIONAL_FINAL_FIELDS))
          .describe("The optional fields of a result's `final` this server takes (`skip_reason`, `failed_steps`, `stack_frames`); a reporter sends no other"),
        accepts_attempt_fields: z
          .array(z.enum(OPTIONAL_ATTEMPT_FIELDS))
          .describe('The optional fields of a result this server takes (`parallel_index`, the Playwright worker slot that ran it); a reporter sends no other'),
        number: RUN_NUMBER,
      }),
    }),
    handler: async ({ params, body, scope }) => {
      const number = await beginShard(sql, scope.projectId, params.id, params.shard, body, clock());
      return { data: { success: true, accepts_final_fields: [...OPTIONAL_FINAL_FIELDS], accepts_attempt_fields: [...OPTIONAL_ATTEMPT_FIELDS], number } };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/results',
    needs: 'member',
    run: ({ params }) => params.id,
    tag: REPORTING,
    summary: 'A batch of test attempts (gzip accepted); idempotent per run, test and retry',
    params: runParams,
    body: resultBatchSchema,
    response: resultBatchResponse,
    handler: async ({ params, body, scope }) => {
      const { recorded, maxFailures } = await results.recordBatch(scope.projectId, params.id, body.shard, body.results, clock());
      resultsIngested.inc({ source: 'batch' }, recorded);
      // Fail fast: only a batch that brought a failure can take the run to its limit, and only a
      // run that has one (its row, as the write locked it, says): the others ask nothing more.
      const failed = recorded > 0 && body.results.some((a) => a.final?.outcome === 'unexpected');
      const stopped = failed && maxFailures !== null && (await stopAtFailureLimit(params.id, maxFailures, clock()));
      if (stopped) {
        // As a cancel does: the executor's shards of this run are stopped now, not at their heartbeat.
        deps.jobs?.runEnded();
        await deps.jobs?.stopRun(params.id);
      }
      const testRun = stopped ? { state: 'cancelled' as const, cancelled_by: STOPPED_BY_FAILURES } : { state: 'running' as const, cancelled_by: null };
      return { data: { received: body.results.length, recorded, test_run: testRun } };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/shards/:shard/end',
    needs: 'member',
    run: ({ params }) => params.id,
    tag: REPORTING,
    summary: "A shard ends with Playwright's status; the last one completes the run",
    params: shardParams,
    body: shardEndSchema,
    response: z.object({ data: z.object({ success: z.boolean(), state: z.string(), summary_url: z.string(), number: RUN_NUMBER }) }),
    handler: async ({ params, body, scope }) => {
      await endShard(sql, scope.projectId, params.id, params.shard, body, clock());
      const run = await store.getRun(sql, scope.projectId, params.id);
      if (!run) throw notFound('test run');
      if (isTerminal(run.state)) deps.jobs?.runEnded();
      return { data: { success: true, state: run.state, summary_url: present(run).summary_url, number: run.number } };
    },
  });
}
