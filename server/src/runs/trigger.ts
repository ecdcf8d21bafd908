import type { Scope } from '../auth/middleware.ts';
import type { Sql } from '../db.ts';
import { getEnvironmentBySlug } from '../environments/store.ts';
import { listBranches, RepositoryError, resolveBranch, resolveRepository } from '../executor/repository.ts';
import { HttpError, ValidationError } from '../http/errors.ts';
import { checkLegacyProjectId } from '../projects/scope.ts';
import { getProject } from '../projects/store.ts';
import { createPendingRun, failedTestIds, type NewRun } from './lifecycle.ts';
import type { Trigger } from './schema.ts';

interface SourceRun {
  id: number;
  test_run_branch: string | null;
  build: Trigger['build'] | null;
  tags: string[];
  test_case_ids: string[];
  total_shards: number;
}

/**
 * The branch a trigger runs: `branch`, else the build's branch when the repository has it, else
 * the default branch. A repository that cannot be read now is left to the executor, whose run
 * then ends `error` with the reason.
 */
async function triggerBranch(repoUrl: string, branch: string | null, buildBranch: string | null): Promise<string | null> {
  try {
    const repository = await resolveRepository(repoUrl);
    if (repository.kind === 'folder') {
      if (branch) throw new ValidationError("body.branch: the project's test repository is a local folder, which has no branches");
      return null;
    }
    const found = await listBranches(repository);
    if (branch && !found.branches.has(branch)) throw new ValidationError(`body.branch: the test repository has no branch "${branch}"`);
    return resolveBranch(found, branch, buildBranch);
  } catch (error) {
    if (error instanceof RepositoryError) return branch ?? buildBranch;
    throw error;
  }
}

export async function triggerRun(sql: Sql, scope: Scope, body: Trigger, now: Date) {
  checkLegacyProjectId(scope, body.project_id);
  const environment = await getEnvironmentBySlug(sql, scope.projectId, body.environment);
  if (!environment) throw new HttpError(404, `body.environment: no environment with slug "${body.environment}" in this project`);
  if (environment.is_disabled) throw new HttpError(409, `environment "${body.environment}" is disabled`);
  let source: SourceRun | null = null;
  if (body.rerun_source_id !== undefined) {
    [source = null] = await sql<SourceRun[]>`
      select id, test_run_branch, build, tags, test_case_ids, total_shards from test_runs
      where project_id = ${scope.projectId} and id = ${body.rerun_source_id}`;
    if (!source) throw new HttpError(404, `body.rerun_source_id: test run ${body.rerun_source_id} not found`);
  }
  let testCaseIds = body.test_case_ids ?? source?.test_case_ids ?? [];
  if (body.rerun_only_failed && source) {
    testCaseIds = await failedTestIds(sql, source.id);
    if (testCaseIds.length === 0) throw new HttpError(409, `body.rerun_only_failed: test run ${source.id} has no failed tests to run again`);
  }
  const project = await getProject(sql, scope.projectId);
  if (!project) throw new HttpError(404, 'project not found');
  const build = body.build ?? (body.branch ? null : (source?.build ?? null));
  const run: NewRun = {
    environmentId: environment.id,
    origin: 'api',
    branch: await triggerBranch(project.repo_url, body.branch ?? (build ? null : (source?.test_run_branch ?? null)), build?.branch ?? null),
    build,
    metadata: body.metadata ?? {},
    overrides: body.environment_variables_overrides ?? [],
    tags: body.tags ?? source?.tags ?? [],
    testCaseIds,
    sendNotifications: body.send_notifications,
    totalShards: body.total_shards ?? source?.total_shards ?? 1,
    rerunSourceId: source?.id ?? null,
    rerunOnlyFailed: body.rerun_only_failed ?? false,
    scmActor: body.scm_actor ?? null,
    scheduledFor: null,
  };
  const created = await createPendingRun(sql, scope.projectId, run, now);
  if (!created) throw new Error('the run was not created');
  return created;
}
