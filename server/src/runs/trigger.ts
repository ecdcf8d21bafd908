import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { checkLegacyProjectId, type Scope } from '../principals.ts';
import type { BranchLookup } from '@proctor/reporter/toolchain/repository';
import type { Sql, Tx } from '../db.ts';
import { environmentForRun } from '../environments/index.ts';
import { getProject, requireRepository } from '../projects/index.ts';
import { resolveBranch } from './branch.ts';
import { createPendingRun, type NewRun } from './record.ts';
import { failedTestIds, getSourceRun, type SourceRun } from './store.ts';
import type { Trigger } from './schema.ts';

/**
 * The branch a trigger runs: the one asked for (`branch`, else the build's) when the repository has
 * it, else the default branch; the run keeps the one asked for as its branch, and its page says
 * which ran. One rule for "Run now" and the CI's branch. A repository that cannot be read now is
 * left to the executor, which applies the same rule.
 */
async function triggerBranch(lookup: BranchLookup, repoUrl: string, asked: string | null, named: boolean): Promise<string | null> {
  const repository = await lookup(repoUrl);
  if (!repository) return null;
  if (repository.kind === 'folder') {
    if (named) throw new InvalidInputError("body.branch: the project's test repository is a local folder, which has no branches");
    return null;
  }
  return resolveBranch(repository.found, null, asked);
}

export async function triggerRun(sql: Sql, branches: BranchLookup, scope: Scope, body: Trigger, now: Date) {
  checkLegacyProjectId(scope, body.project_id);
  const project = await getProject(sql, scope.projectId);
  if (!project) throw new NotFoundError('project not found');
  const repoUrl = requireRepository(project.repo_url);
  const environment = await environmentForRun(sql, scope.projectId, body.environment);
  let source: SourceRun | null = null;
  if (body.rerun_source_id !== undefined) {
    source = await getSourceRun(sql, scope.projectId, body.rerun_source_id);
    if (!source) throw new NotFoundError(`body.rerun_source_id: test run ${body.rerun_source_id} not found`);
  }
  let testCaseIds = body.test_case_ids ?? source?.test_case_ids ?? [];
  if (body.rerun_only_failed && source) {
    if (source.details_deleted_at) {
      throw new ConflictError(`body.rerun_only_failed: the retention policy deleted the results of test run ${source.id}, so its failed tests are not known`);
    }
    testCaseIds = await failedTestIds(sql, source.id);
    if (testCaseIds.length === 0) throw new ConflictError(`body.rerun_only_failed: test run ${source.id} has no failed tests to run again`);
  }
  const sourceBuild = body.branch ? null : (source?.build ?? null);
  const asked = body.branch ?? body.build?.branch ?? sourceBuild?.branch ?? source?.test_run_branch ?? null;
  // A branch asked for by name is the run's branch as a build's is, whichever the repository ran.
  const build = body.build ?? sourceBuild ?? (body.branch ? { branch: body.branch } : null);
  const run: NewRun = {
    environmentId: environment.id,
    origin: 'api',
    distribution: body.distribution ?? source?.distribution ?? 'shards',
    branch: await triggerBranch(branches, repoUrl, asked, body.branch !== undefined),
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
    maxFailures: body.max_failures ?? null,
    affected: body.affected ?? false,
  };
  // Agents list and pull the suite themselves: the selection is the executor's, for its shards.
  if (run.affected && run.distribution === 'agents') throw new InvalidInputError('body.affected: affected runs are run as shards, not by agents');
  const created = await createPendingRun(sql, scope.projectId, run, now);
  if (!created) throw new Error('the run was not created');
  return created;
}

/**
 * The rerun that proves approved baselines pushed to the project's repository (issue 57): the
 * changed tests only, as a rerun of failed tests would, on the branch whose head is the new commit
 * (its build names the commit, which the review page and the proof look the run up by).
 */
export async function triggerBaselineRerun(
  sql: Tx,
  rerun: { projectId: number; environmentId: number; sourceRunId: number; branch: string; commit: string; testCaseIds: string[] },
  now: Date,
): Promise<{ id: number; number: number } | null> {
  if (rerun.testCaseIds.length === 0) return null;
  const run = await createPendingRun(
    sql,
    rerun.projectId,
    {
      environmentId: rerun.environmentId,
      origin: 'api',
      distribution: 'shards',
      branch: rerun.branch,
      build: { branch: rerun.branch, commit: rerun.commit },
      metadata: {},
      overrides: [],
      tags: [],
      testCaseIds: rerun.testCaseIds,
      sendNotifications: true,
      totalShards: 1,
      rerunSourceId: rerun.sourceRunId,
      rerunOnlyFailed: true,
      scmActor: null,
      scheduledFor: null,
      maxFailures: null,
    },
    now,
  );
  return run ? { id: run.id, number: run.number } : null;
}
