import type { AppDeps } from '../context.ts';
import { actorOf } from '../audit/index.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { getRun, summaryUrl } from '../runs/index.ts';
import { multipartFiles } from './multipart.ts';
import { JUNIT_LIMITS, junitUploadQuery, junitUploadResponse } from './schema.ts';
import { uploadJunit } from './upload.ts';

export function junitRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config, signingSecret } = deps;

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/junit',
    needs: 'member',
    tag: 'Reporting (used by the Playwright reporter)',
    summary:
      'Upload JUnit XML files from any test runner (multipart/form-data, one part per file, streamed): one shard of the run of run_key, stored whole or not at all',
    query: junitUploadQuery,
    consumes: { contentType: 'multipart/form-data', description: 'the JUnit XML files, each a part with its file name' },
    response: junitUploadResponse,
    fails: { 409: 'run_key names a run of another environment, or one that has ended before this shard was uploaded' },
    handler: async ({ query, scope, req }) => {
      const now = clock();
      const files = multipartFiles(req, { fileBytes: config.uploadLimitBytes, files: JUNIT_LIMITS.files });
      const outcome = await uploadJunit(sql, scope.projectId, query, files, { fileMb: config.uploadLimitBytes / 2 ** 20, now, actor: actorOf(scope) });
      const run = await getRun(sql, scope.projectId, outcome.runId);
      return {
        data: {
          test_run: { id: outcome.runId, state: run?.state ?? 'running', summary_url: summaryUrl(config.publicUrl, signingSecret, outcome.runId, now) },
          files: outcome.files,
          counts: outcome.counts,
          failed_tests: outcome.failed,
          attachments: outcome.attachments,
        },
      };
    },
  });
}
