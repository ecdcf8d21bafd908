import type { Sql } from '../db.ts';
import type { Actor } from '../audit/index.ts';
import { environmentForReport } from '../environments/index.ts';
import { ConflictError } from '../errors.ts';
import { isTerminal } from '../states.ts';
import { findOrCreateReportRun, joinableRunOfKey } from './record.ts';
import type { ReportRun } from './schema.ts';

/**
 * The run a reporter in CI reports into: made by its first shard, joined by the others through the
 * run key, which names one run of one environment while it goes on. An environment the project
 * lacks is made on first use, with `actor` in the audit trail (unless the project says not to).
 */
export async function startReportRun(sql: Sql, projectId: number, body: ReportRun, now: Date, actor: Actor): Promise<{ id: number; number: number }> {
  // A shard joining the run its build's first shard made: one read. At the start of a big build
  // thousands of shards report at once, and each statement is a turn for a pooled connection.
  const joined = body.run_key === null ? null : await joinableRunOfKey(sql, projectId, body.run_key, body.environment);
  if (joined) {
    if (isTerminal(joined.state)) throw endedRunKey(body.run_key as string, joined.id);
    return { id: joined.id, number: joined.number };
  }
  const environment = await environmentForReport(sql, projectId, body.environment, 'body.environment', { actor, now });
  const run = await findOrCreateReportRun(
    sql,
    projectId,
    {
      environmentId: environment.id,
      runKey: body.run_key,
      totalShards: body.total_shards,
      branch: body.branch,
      commit: body.commit,
      buildUrl: body.build_url,
      pullRequest: body.pull_request,
      maxFailures: body.max_failures,
    },
    now,
  );
  if (run.environment_id !== environment.id) throw new ConflictError(`body.run_key: "${body.run_key}" belongs to run ${run.id} of another environment`);
  if (isTerminal(run.state)) throw endedRunKey(body.run_key as string, run.id);
  return { id: run.id, number: run.number };
}

function endedRunKey(runKey: string, runId: number): ConflictError {
  return new ConflictError(`body.run_key: "${runKey}" belongs to run ${runId}, which has ended; a new run needs a new key`);
}
