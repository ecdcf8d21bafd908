// What a CI system says of the build a process runs in: the key its jobs share, its page, and the
// branch and commit it builds, each from that CI's documented variables.

import type { CiSystemName } from '../api/wire.ts';

type Env = NodeJS.ProcessEnv;

interface CiSystem {
  name: CiSystemName;
  /** Whether the process runs in a build of this CI. */
  detects(env: Env): boolean;
  /** The id every job of one build (and of one retry of it) shares. */
  buildKey(env: Env): string | null;
  buildUrl(env: Env): string | null;
  /** A pull or merge request's source branch before the branch built. */
  branch(env: Env): string | null;
  commit(env: Env): string | null;
  /** The number of the pull or merge request the build is for. */
  pullRequest(env: Env): number | null;
}

/** The first of the variables that is set and not empty. */
function firstOf(env: Env, names: string[]): string | null {
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  return null;
}

/** A request's number: the variable's value when it is one, else the first number after `after` in it (a URL, a ref). */
function numberIn(value: string | null, after?: RegExp): number | null {
  if (!value) return null;
  const text = after ? after.exec(value)?.[1] : value;
  return text && /^[1-9]\d{0,9}$/.test(text) && Number(text) <= 2_147_483_647 ? Number(text) : null;
}

const withoutPrefix = (value: string | null, prefix: RegExp) => (value ? value.replace(prefix, '') : null);

// Each system's variables as its documentation names them; `detects` looks for the build's own id,
// which is set in every job of a build.
const SYSTEMS: CiSystem[] = [
  {
    // https://docs.github.com/actions/reference/variables-reference
    name: 'github',
    detects: (env) => Boolean(env.GITHUB_RUN_ID),
    buildKey: (env) => `${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`,
    buildUrl: (env) =>
      env.GITHUB_REPOSITORY ? `${env.GITHUB_SERVER_URL ?? 'https://github.com'}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}` : null,
    branch: (env) => firstOf(env, ['GITHUB_HEAD_REF', 'GITHUB_REF_NAME']),
    commit: (env) => firstOf(env, ['GITHUB_SHA']),
    // A pull_request event's ref is refs/pull/<number>/merge.
    pullRequest: (env) => numberIn(firstOf(env, ['GITHUB_REF']), /^refs\/pull\/(\d+)\//),
  },
  {
    // https://docs.gitlab.com/ci/variables/predefined_variables/
    name: 'gitlab',
    detects: (env) => Boolean(env.CI_PIPELINE_ID),
    buildKey: (env) => env.CI_PIPELINE_ID as string,
    buildUrl: (env) => firstOf(env, ['CI_PIPELINE_URL']),
    branch: (env) => firstOf(env, ['CI_MERGE_REQUEST_SOURCE_BRANCH_NAME', 'CI_COMMIT_BRANCH', 'CI_COMMIT_REF_NAME']),
    commit: (env) => firstOf(env, ['CI_COMMIT_SHA']),
    pullRequest: (env) => numberIn(firstOf(env, ['CI_MERGE_REQUEST_IID', 'CI_EXTERNAL_PULL_REQUEST_IID'])),
  },
  {
    // https://buildkite.com/docs/pipelines/configure/environment-variables
    name: 'buildkite',
    detects: (env) => Boolean(env.BUILDKITE_BUILD_ID),
    buildKey: (env) => env.BUILDKITE_BUILD_ID as string,
    buildUrl: (env) => firstOf(env, ['BUILDKITE_BUILD_URL']),
    branch: (env) => firstOf(env, ['BUILDKITE_BRANCH']),
    commit: (env) => firstOf(env, ['BUILDKITE_COMMIT']),
    // "false" outside a pull request.
    pullRequest: (env) => numberIn(firstOf(env, ['BUILDKITE_PULL_REQUEST'])),
  },
  {
    // https://circleci.com/docs/reference/variables/
    name: 'circleci',
    detects: (env) => Boolean(env.CIRCLE_WORKFLOW_ID),
    buildKey: (env) => env.CIRCLE_WORKFLOW_ID as string,
    buildUrl: (env) => firstOf(env, ['CIRCLE_BUILD_URL']),
    branch: (env) => firstOf(env, ['CIRCLE_BRANCH']),
    commit: (env) => firstOf(env, ['CIRCLE_SHA1']),
    // CIRCLE_PR_NUMBER is set for forks' pull requests only; CIRCLE_PULL_REQUEST is the request's URL.
    pullRequest: (env) => numberIn(firstOf(env, ['CIRCLE_PR_NUMBER'])) ?? numberIn(firstOf(env, ['CIRCLE_PULL_REQUEST']), /\/pull\/(\d+)$/),
  },
  {
    // https://www.jenkins.io/doc/book/pipeline/jenkinsfile/#using-environment-variables (and the Git
    // plugin's GIT_BRANCH, GIT_COMMIT; CHANGE_BRANCH in a multibranch pipeline's change request)
    name: 'jenkins',
    detects: (env) => Boolean(env.JENKINS_URL && env.BUILD_TAG),
    buildKey: (env) => env.BUILD_TAG as string,
    buildUrl: (env) => firstOf(env, ['BUILD_URL']),
    branch: (env) => firstOf(env, ['CHANGE_BRANCH', 'BRANCH_NAME']) ?? withoutPrefix(firstOf(env, ['GIT_BRANCH']), /^(origin|refs\/heads)\//),
    commit: (env) => firstOf(env, ['GIT_COMMIT']),
    // A multibranch pipeline's change request.
    pullRequest: (env) => numberIn(firstOf(env, ['CHANGE_ID'])),
  },
  {
    // https://learn.microsoft.com/azure/devops/pipelines/build/variables
    name: 'azure',
    detects: (env) => Boolean(env.TF_BUILD && env.BUILD_BUILDID),
    // A stage run again gets a new attempt for all its jobs (a job's own attempt would split its shards).
    buildKey: (env) => `${env.BUILD_BUILDID}-${env.SYSTEM_STAGEATTEMPT ?? '1'}`,
    buildUrl: (env) =>
      env.SYSTEM_COLLECTIONURI && env.SYSTEM_TEAMPROJECT
        ? `${env.SYSTEM_COLLECTIONURI.replace(/\/?$/, '/')}${encodeURIComponent(env.SYSTEM_TEAMPROJECT)}/_build/results?buildId=${env.BUILD_BUILDID}`
        : null,
    branch: (env) => withoutPrefix(firstOf(env, ['SYSTEM_PULLREQUEST_SOURCEBRANCH', 'BUILD_SOURCEBRANCH']), /^refs\/heads\//),
    commit: (env) => firstOf(env, ['BUILD_SOURCEVERSION']),
    // The number on GitHub and Bitbucket; the id on Azure Repos.
    pullRequest: (env) => numberIn(firstOf(env, ['SYSTEM_PULLREQUEST_PULLREQUESTNUMBER', 'SYSTEM_PULLREQUEST_PULLREQUESTID'])),
  },
  {
    // https://support.atlassian.com/bitbucket-cloud/docs/variables-and-secrets/
    name: 'bitbucket',
    detects: (env) => Boolean(env.BITBUCKET_BUILD_NUMBER),
    buildKey: (env) => `${env.BITBUCKET_PIPELINE_UUID ?? `${env.BITBUCKET_REPO_FULL_NAME ?? ''}${env.BITBUCKET_BUILD_NUMBER}`}`.replace(/[{}]/g, ''),
    buildUrl: (env) =>
      env.BITBUCKET_GIT_HTTP_ORIGIN ? `${env.BITBUCKET_GIT_HTTP_ORIGIN.replace(/^http:/, 'https:')}/pipelines/results/${env.BITBUCKET_BUILD_NUMBER}` : null,
    branch: (env) => firstOf(env, ['BITBUCKET_BRANCH']),
    commit: (env) => firstOf(env, ['BITBUCKET_COMMIT']),
    pullRequest: (env) => numberIn(firstOf(env, ['BITBUCKET_PR_ID'])),
  },
];

/** The CI system the process runs in, if it is one this knows. */
function ciSystem(env: Env): CiSystem | null {
  return SYSTEMS.find((system) => system.detects(env)) ?? null;
}

/** Shards of one CI build share a run through this key; with none, each invocation is its own run. */
export function ciRunKey(env: Env): string | null {
  if (env.PROCTOR_RUN_KEY) return env.PROCTOR_RUN_KEY;
  const system = ciSystem(env);
  const key = system?.buildKey(env);
  return system && key ? `${system.name}-${key}` : null;
}

export function ciBuildUrl(env: Env): string | null {
  return ciSystem(env)?.buildUrl(env) ?? null;
}

/**
 * The branch and commit a CI build runs, from PROCTOR_BRANCH and PROCTOR_COMMIT or the CI's own
 * variables (a pull request's source branch before the branch built); null where none says.
 */
export function ciRevision(env: Env): { branch: string | null; commit: string | null } {
  const system = ciSystem(env);
  return {
    branch: env.PROCTOR_BRANCH || system?.branch(env) || null,
    commit: env.PROCTOR_COMMIT || system?.commit(env) || null,
  };
}

/** The pull or merge request a CI build is for, from PROCTOR_PULL_REQUEST or the CI's own variables; null where none says. */
export function ciPullRequest(env: Env): number | null {
  return numberIn(env.PROCTOR_PULL_REQUEST ?? null) ?? ciSystem(env)?.pullRequest(env) ?? null;
}

/**
 * The run key of a CI build's agents: PROCTOR_RUN_KEY, else the build's id, prefixed so that a
 * build's agents and a reporter of its own never share a run; null outside CI.
 */
export function agentsRunKey(env: Env): string | null {
  if (env.PROCTOR_RUN_KEY) return env.PROCTOR_RUN_KEY;
  const build = ciRunKey(env);
  return build ? `agents-${build}` : null;
}
