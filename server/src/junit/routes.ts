import type { AppDeps } from '../context.ts';
import { actorOf } from '../audit/index.ts';
import { notFound } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { getRun, summaryUrl } from '../runs/index.ts';
import { multipartFiles } from './multipart.ts';
import { JUNIT_LIMITS, junitUploadQuery, junitUploadResponse } from './schema.ts';
import { readJunitUpload, storeJunitUpload } from './upload.ts';

export function junitRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config, signingSecret } = deps;

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/junit',
    needs: 'member',
    tag: 'Reporting (used by the Playwright reporter)',
    summary:
      'Upload test report files from any runner, in every format Proctor reads (JUnit XML, TRX, NUnit, xUnit.net, `go test -json`, Mocha, RSpec and Dart/Flutter JSON, CTRF), each detected from its content or forced by `format` (multipart/form-data, one part per file, streamed): one shard of the run of run_key, stored whole or not at all',
    query: junitUploadQuery,
    consumes: { contentType: 'multipart/form-data', description: 'the report files, each a part with its file name' },
    response: junitUploadResponse,
    fails: { 409: 'run_key names a run of another environment, or one that has ended before this shard was uploaded' },
    handler: async ({ query, scope, req, res, signal }) => {
      const now = clock();
      // The body is read and checked whole before any lock or transaction: a client that goes
      // away or stalls while sending it holds nothing of the database.
      const files = multipartFiles(req, { fileBytes: config.uploadLimitBytes, files: JUNIT_LIMITS.files }, signal);
      const read = await readJunitUpload(files, { fileMb: config.uploadLimitBytes / 2 ** 20, signal });
      // Writing a large upload takes a while after its last byte: a 102 now and then keeps a client's
      // idle timeout (proctor-ci's is 30 s) from taking the wait for a dead server.
      const heartbeat = setInterval(() => {
        if (!res.headersSent && !res.destroyed) res.writeProcessing();
      }, 10_000);
      const outcome = await storeJunitUpload(sql, scope.projectId, query, read, { now, signal, actor: actorOf(scope) }).finally(() => {
        clearInterval(heartbeat);
        return read.spool.remove();
      });
      const run = await getRun(sql, scope.projectId, outcome.runId);
      if (!run) throw notFound('test run');
      return {
        data: {
          test_run: { id: run.id, number: run.number, state: run.state, summary_url: summaryUrl(config.publicUrl, signingSecret, run.id, now) },
          files: outcome.files,
          counts: outcome.counts,
          failed_tests: outcome.failed,
          attachments: outcome.attachments,
        },
      };
    },
  });
}
