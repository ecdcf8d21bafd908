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
