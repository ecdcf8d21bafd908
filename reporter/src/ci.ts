// What a CI system says of the build a process runs in: the key its jobs share, its page.

/** Shards of one CI build share a run through this key; with none, each invocation is its own run. */
export function ciRunKey(env: NodeJS.ProcessEnv): string | null {
  if (env.PROCTOR_RUN_KEY) return env.PROCTOR_RUN_KEY;
  if (env.GITHUB_RUN_ID) return `github-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`;
  if (env.CI_PIPELINE_ID) return `gitlab-${env.CI_PIPELINE_ID}`;
  if (env.BUILDKITE_BUILD_ID) return `buildkite-${env.BUILDKITE_BUILD_ID}`;
  if (env.CIRCLE_WORKFLOW_ID) return `circleci-${env.CIRCLE_WORKFLOW_ID}`;
  if (env.BUILD_TAG && env.JENKINS_URL) return `jenkins-${env.BUILD_TAG}`;
  return null;
}

export function ciBuildUrl(env: NodeJS.ProcessEnv): string | null {
  if (env.GITHUB_RUN_ID && env.GITHUB_REPOSITORY) {
    return `${env.GITHUB_SERVER_URL ?? 'https://github.com'}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return env.CI_PIPELINE_URL ?? env.BUILDKITE_BUILD_URL ?? env.CIRCLE_BUILD_URL ?? env.BUILD_URL ?? null;
}

/** The first of the variables that is set and not empty. */
function firstOf(env: NodeJS.ProcessEnv, names: string[]): string | null {
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  return null;
}

/**
 * The branch and commit a CI build runs, from PROCTOR_BRANCH and PROCTOR_COMMIT or each CI's own
 * variables (a pull request's source branch before the branch built); null where none says.
 */
export function ciRevision(env: NodeJS.ProcessEnv): { branch: string | null; commit: string | null } {
  return {
    branch: firstOf(env, [
      'PROCTOR_BRANCH',
      'GITHUB_HEAD_REF',
      'GITHUB_REF_NAME',
      'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME',
      'CI_COMMIT_REF_NAME',
      'BUILDKITE_BRANCH',
      'CIRCLE_BRANCH',
      'CHANGE_BRANCH',
      'BRANCH_NAME',
      'BITBUCKET_BRANCH',
      'SYSTEM_PULLREQUEST_SOURCEBRANCH',
      'BUILD_SOURCEBRANCHNAME',
    ]),
    commit: firstOf(env, [
      'PROCTOR_COMMIT',
      'GITHUB_SHA',
      'CI_COMMIT_SHA',
      'BUILDKITE_COMMIT',
      'CIRCLE_SHA1',
      'GIT_COMMIT',
      'BITBUCKET_COMMIT',
      'BUILD_SOURCEVERSION',
    ]),
  };
}

/**
 * The run key of a CI build's agents: PROCTOR_RUN_KEY, else the build's id, prefixed so that a
 * build's agents and a reporter of its own never share a run; null outside CI.
 */
export function agentsRunKey(env: NodeJS.ProcessEnv): string | null {
  if (env.PROCTOR_RUN_KEY) return env.PROCTOR_RUN_KEY;
  const build = ciRunKey(env);
  return build ? `agents-${build}` : null;
}
