import type { Sql } from '../db.ts';
import type { Actor } from '../audit/index.ts';
import { environmentForReport } from '../environments/index.ts';
import { ConflictError } from '../errors.ts';
import { isTerminal } from '../states.ts';
import { findOrCreateReportRun } from './record.ts';
import type { ReportRun } from './schema.ts';

/**
 * The run a reporter in CI reports into: made by its first shard, joined by the others through the
 * run key, which names one run of one environment while it goes on. An environment the project
 * lacks is made on first use, with `actor` in the audit trail (unless the project says not to).
 */
export async function startReportRun(sql: Sql, projectId: number, body: ReportRun, now: Date, actor: Actor): Promise<{ id: number; number: number }> {
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
  if (isTerminal(run.state)) throw new ConflictError(`body.run_key: "${body.run_key}" belongs to run ${run.id}, which has ended; a new run needs a new key`);
  return { id: run.id, number: run.number };
}
