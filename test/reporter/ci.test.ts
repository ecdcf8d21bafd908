import { describe, expect, it } from 'vitest';
import { agentsRunKey, ciBuildUrl, ciPullRequest, ciRevision, ciRunKey } from '../../reporter/src/runs/ci.ts';

// Each CI's variables as its documentation lists them for a job of a pull or merge request's build
// (values from the documentation's own examples where it gives them): the reporter, the agent and
// the action find the build's key, page, branch and commit in them.

const BUILDS: { ci: string; env: NodeJS.ProcessEnv; key: string; url: string; branch: string; commit: string; pullRequest: number | null }[] = [
  {
    ci: 'GitHub Actions',
    env: {
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_RUN_ID: '1658821493',
      GITHUB_RUN_ATTEMPT: '2',
      GITHUB_REPOSITORY: 'octocat/Hello-World',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REF: 'refs/pull/42/merge',
      GITHUB_REF_NAME: '42/merge',
      GITHUB_HEAD_REF: 'feature-branch-1',
      GITHUB_SHA: 'ffac537e6cbbf934b08745a378932722df287a53',
    },
    key: 'github-1658821493-2',
    url: 'https://github.com/octocat/Hello-World/actions/runs/1658821493',
    branch: 'feature-branch-1',
    commit: 'ffac537e6cbbf934b08745a378932722df287a53',
    pullRequest: 42,
  },
  {
    ci: 'GitLab CI',
    env: {
      CI: 'true',
      GITLAB_CI: 'true',
      CI_PIPELINE_ID: '1000',
      CI_PIPELINE_URL: 'https://gitlab.example.com/group/project/-/pipelines/1000',
      CI_COMMIT_REF_NAME: 'main',
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'fix-login',
      CI_MERGE_REQUEST_IID: '7',
      CI_COMMIT_SHA: '1ecfd275763eff1d6b4844ea3168962458c9f27a',
    },
    key: 'gitlab-1000',
    url: 'https://gitlab.example.com/group/project/-/pipelines/1000',
    branch: 'fix-login',
    commit: '1ecfd275763eff1d6b4844ea3168962458c9f27a',
    pullRequest: 7,
  },
  {
    ci: 'Jenkins (a multibranch pipeline, a change request)',
    env: {
      JENKINS_URL: 'https://jenkins.example.com/',
      BUILD_TAG: 'jenkins-shop-PR-12-3',
      BUILD_URL: 'https://jenkins.example.com/job/shop/job/PR-12/3/',
      BRANCH_NAME: 'PR-12',
      CHANGE_ID: '12',
      CHANGE_BRANCH: 'checkout-redesign',
      GIT_BRANCH: 'PR-12',
      GIT_COMMIT: 'a3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    },
    key: 'jenkins-jenkins-shop-PR-12-3',
    url: 'https://jenkins.example.com/job/shop/job/PR-12/3/',
    branch: 'checkout-redesign',
    commit: 'a3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    pullRequest: 12,
  },
  {
    ci: 'Jenkins (a freestyle job with the Git plugin)',
    env: {
      JENKINS_URL: 'https://jenkins.example.com/',
      BUILD_TAG: 'jenkins-shop-88',
      BUILD_URL: 'https://jenkins.example.com/job/shop/88/',
      GIT_BRANCH: 'origin/release/2.0',
      GIT_COMMIT: 'b3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    },
    key: 'jenkins-jenkins-shop-88',
    url: 'https://jenkins.example.com/job/shop/88/',
    branch: 'release/2.0',
    commit: 'b3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    pullRequest: null,
  },
  {
    ci: 'CircleCI',
    env: {
      CI: 'true',
      CIRCLECI: 'true',
      CIRCLE_WORKFLOW_ID: '6ff9f0f5-6ba9-4fd8-9cc7-0c2a0f8f9e4d',
      CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/shop/123',
      CIRCLE_BRANCH: 'pull/9',
      CIRCLE_PULL_REQUEST: 'https://github.com/acme/shop/pull/9',
      CIRCLE_SHA1: 'c3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    },
    key: 'circleci-6ff9f0f5-6ba9-4fd8-9cc7-0c2a0f8f9e4d',
    url: 'https://circleci.com/gh/acme/shop/123',
    branch: 'pull/9',
    commit: 'c3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    pullRequest: 9,
  },
  {
    ci: 'Buildkite',
    env: {
      CI: 'true',
      BUILDKITE: 'true',
      BUILDKITE_BUILD_ID: 'f62a1b4d-10f9-4790-bc1c-e2c3a0c80983',
      BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/shop/builds/1514',
      BUILDKITE_BRANCH: 'faster-checkout',
      BUILDKITE_PULL_REQUEST: '22',
      BUILDKITE_COMMIT: 'd3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    },
    key: 'buildkite-f62a1b4d-10f9-4790-bc1c-e2c3a0c80983',
    url: 'https://buildkite.com/acme/shop/builds/1514',
    branch: 'faster-checkout',
    commit: 'd3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    pullRequest: 22,
  },
  {
    ci: 'Azure Pipelines',
    env: {
      TF_BUILD: 'True',
      BUILD_BUILDID: '2701',
      SYSTEM_STAGEATTEMPT: '1',
      SYSTEM_COLLECTIONURI: 'https://dev.azure.com/fabrikam/',
      SYSTEM_TEAMPROJECT: 'Fabrikam Shop',
      BUILD_SOURCEBRANCH: 'refs/pull/31/merge',
      BUILD_SOURCEBRANCHNAME: 'merge',
      SYSTEM_PULLREQUEST_SOURCEBRANCH: 'refs/heads/users/ana/cart',
      SYSTEM_PULLREQUEST_PULLREQUESTID: '31',
      BUILD_SOURCEVERSION: 'e3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    },
    key: 'azure-2701-1',
    url: 'https://dev.azure.com/fabrikam/Fabrikam%20Shop/_build/results?buildId=2701',
    branch: 'users/ana/cart',
    commit: 'e3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    pullRequest: 31,
  },
  {
    ci: 'Bitbucket Pipelines',
    env: {
      CI: 'true',
      BITBUCKET_BUILD_NUMBER: '57',
      BITBUCKET_PIPELINE_UUID: '{2f1e3c4d-5a6b-4c7d-8e9f-0a1b2c3d4e5f}',
      BITBUCKET_GIT_HTTP_ORIGIN: 'http://bitbucket.org/acme/shop',
      BITBUCKET_BRANCH: 'feature/search',
      BITBUCKET_PR_ID: '5',
      BITBUCKET_COMMIT: 'f3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    },
    key: 'bitbucket-2f1e3c4d-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
    url: 'https://bitbucket.org/acme/shop/pipelines/results/57',
    branch: 'feature/search',
    commit: 'f3c1b2d4e5f60718293a4b5c6d7e8f9012345678',
    pullRequest: 5,
  },
];

describe('the CI a build runs in', () => {
  it.each(BUILDS)(
    "when a job of a $ci build reports, then its key, page, branch, commit and pull request come from the CI's variables",
    ({ env, key, url, branch, commit, pullRequest }) => {
      expect(ciPullRequest(env)).toBe(pullRequest);
      expect(ciRunKey(env)).toBe(key);
      expect(agentsRunKey(env)).toBe(`agents-${key}`);
      expect(ciBuildUrl(env)).toBe(url);
      expect(ciRevision(env)).toEqual({ branch, commit });
    },
  );

  it('when a build is for no pull request, then it has none, whatever form the CI says that in', () => {
    expect(ciPullRequest({ GITHUB_RUN_ID: '1', GITHUB_REF: 'refs/heads/main' })).toBeNull();
    expect(ciPullRequest({ BUILDKITE_BUILD_ID: 'b', BUILDKITE_PULL_REQUEST: 'false' })).toBeNull();
    expect(ciPullRequest({ CI_PIPELINE_ID: '1', CI_COMMIT_BRANCH: 'main' })).toBeNull();
    expect(ciPullRequest({ CIRCLE_WORKFLOW_ID: 'w', CIRCLE_PULL_REQUEST: '' })).toBeNull();
    // Not a number PostgreSQL's integer holds, nor one at all.
    expect(ciPullRequest({ BITBUCKET_BUILD_NUMBER: '1', BITBUCKET_PR_ID: '99999999999' })).toBeNull();
    expect(ciPullRequest({ JENKINS_URL: 'https://j/', BUILD_TAG: 't', CHANGE_ID: 'abc' })).toBeNull();
  });

  it('when the PROCTOR_ variables are set, then they win over the CI', () => {
    const env = {
      ...(BUILDS[1]?.env as NodeJS.ProcessEnv),
      PROCTOR_RUN_KEY: 'mine',
      PROCTOR_BRANCH: 'given',
      PROCTOR_COMMIT: 'abc',
      PROCTOR_PULL_REQUEST: '70',
    };
    expect(ciPullRequest(env)).toBe(70);
    expect(ciRunKey(env)).toBe('mine');
    expect(agentsRunKey(env)).toBe('mine');
    expect(ciRevision(env)).toEqual({ branch: 'given', commit: 'abc' });
  });

  it("when no CI's build id is set, then there is no key, page, branch or commit, whatever else is set", () => {
    const env = { CI: 'true', BRANCH_NAME: 'main', GIT_COMMIT: 'abc', BUILD_URL: 'https://example.com/1' };
    expect(ciRunKey(env)).toBeNull();
    expect(ciBuildUrl(env)).toBeNull();
    expect(ciRevision(env)).toEqual({ branch: null, commit: null });
  });

  it('when two jobs of one build report, then they share the key, and a retried build (where the CI counts attempts) gets another', () => {
    const github = BUILDS[0]?.env as NodeJS.ProcessEnv;
    expect(ciRunKey({ ...github, GITHUB_JOB: 'shard-2' })).toBe(ciRunKey({ ...github, GITHUB_JOB: 'shard-1' }));
    expect(ciRunKey({ ...github, GITHUB_RUN_ATTEMPT: '3' })).not.toBe(ciRunKey(github));
    const azure = BUILDS[6]?.env as NodeJS.ProcessEnv;
    expect(ciRunKey({ ...azure, SYSTEM_JOBATTEMPT: '2' })).toBe(ciRunKey(azure));
    expect(ciRunKey({ ...azure, SYSTEM_STAGEATTEMPT: '2' })).toBe('azure-2701-2');
  });
});
