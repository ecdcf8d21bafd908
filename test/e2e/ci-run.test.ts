import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResultJson } from '../../reporter/src/cli/run.ts';
import { createKey } from '../../server/src/auth/store.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { client } from '../helpers/http.ts';
import { EXAMPLES, ROOT } from '../helpers/playwright.ts';
import { createTestRepository, type TestRepository } from '../helpers/repo.ts';
import { runIdLinkedIn, waitForRun, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// `proctor-ci run` as a CI job runs it: its own process, its settings from the environment, against
// a server on loopback that executes the runs in real Playwright.

let server: TestServer;
let repo: TestRepository;
/** The sample suite: 10 tests, some failing, some flaky; `--tag smoke` runs 4 that pass. */
let sample: { key: string; api: ReturnType<typeof client> };
/** A small suite in a git repository with branches main and feature. */
let small: { key: string; api: ReturnType<typeof client> };

async function projectWithKey(name: string, repoUrl: string) {
  const project = await createProject(server.sql, { name, repoUrl, repoName: `acme/${name}` });
  await seedEnvironment(server.sql, project.id, 'staging');
  const key = await createKey(server.sql, { projectId: project.id });
  return { key, api: client(server.url, key) };
}

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_EXECUTOR_CONCURRENCY: '2' } });
  repo = createTestRepository();
  sample = await projectWithKey('shop', path.resolve(EXAMPLES));
  small = await projectWithKey('small', repo.dir);
});
afterAll(async () => {
  await server?.close();
  repo?.cleanup();
});

interface Command {
  child: ChildProcess;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/** A process with what it printed collected; `env` is the job's whole environment beside PATH and HOME. */
function started(command: string, args: string[], env: Record<string, string>): Command {
  const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** The built command, as npx runs it from the package (no npx in between, so signals reach it). */
function ciRun(args: string[], key: string, env: Record<string, string> = {}): Command {
  return started(process.execPath, [path.join(ROOT, 'reporter/dist/cli/main.js'), 'run', '--poll', '1', ...args], {
    PROCTOR_URL: server.url,
    PROCTOR_API_KEY: key,
    ...env,
  });
}

const json = (command: Command) => JSON.parse(command.stdout()) as RunResultJson;
/** The run of the line that announces it, by the id in its link (its words name the run by its number). */
const runIdIn = (command: Command) =>
  /^proctor: run #\d+ on .*\/runs\/\d+\?/m.test(command.stderr()) ? runIdLinkedIn(command.stderr(), /^proctor: run #\d+ on /) : 0;

describe('proctor-ci run against a live server', () => {
  it('when the run passes, then it exits 0, prints a line per change and the JSON result, and the run records the CI build', async () => {
    const gitlab = { CI_PIPELINE_ID: '4711', CI_PIPELINE_URL: 'https://gitlab.example.com/acme/shop/-/pipelines/4711', CI_COMMIT_SHA: 'a'.repeat(40) };
    const command = ciRun(['--environment', 'staging', '--tag', 'smoke', '--json'], sample.key, gitlab);
    expect(await command.exited, command.stderr()).toBe(0);
    expect(command.stderr()).toMatch(/proctor: run #\d+ on staging: http:\/\/127\.0\.0\.1:\d+\/runs\/\d+\?token=/);
    expect(command.stderr()).toMatch(/proctor: passed: 4 tests done \(4 passed, 0 failed, 0 flaky, 0 skipped\)/);
    const result = json(command);
    expect(result).toMatchObject({ exit_code: 0, state: 'passed', note: null, counts: { total: 4, passed: 4, failed: 0, flaky: 0, skipped: 0 } });
    expect(result.summary_url).toContain(`/runs/${result.run_id}?token=`);
    // The lines name the run as the dashboard does, by its number in the project; `run_id` is for URLs and the API.
    expect(result.run_number).toBe((await sample.api.get(`/api/test-runs/${result.run_id}`)).body.data.test_run.testRun.number);
    expect(command.stderr()).toContain(`proctor: run #${result.run_number} on staging: `);
    expect(result.failed_tests).toEqual([]);
    const run = (await sample.api.get(`/api/test-runs/${result.run_id}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'passed', commit: gitlab.CI_COMMIT_SHA });
    const [stored] = await server.sql`select metadata from test_runs where id = ${result.run_id}`;
    expect(stored?.metadata).toEqual({ ci_build_url: gitlab.CI_PIPELINE_URL });
  });

  it('when the run fails, then it exits 1 with the summary of its failing tests and failure groups; a rerun of its failures runs those alone', async () => {
    const command = ciRun(['--environment', 'staging'], sample.key);
    expect(await command.exited, command.stderr()).toBe(1);
    const summary = command.stdout();
    expect(summary).toMatch(/^Proctor run #\d+ failed on staging: 10 tests, 4 passed, 2 failed, 2 flaky, 2 skipped in [\d.]+ s$/m);
    expect(summary.match(/✗ greets a returning user/g)).toHaveLength(2);
    expect(summary).toContain("failure group: expect(locator('#banner')).toHaveText at home.spec.ts:19");
    expect(summary).toMatch(/^Flaky: lists the prices/m);
    expect(summary).toMatch(/\/runs\/\d+\?token=/);

    const rerun = ciRun(['--environment', 'staging', '--rerun', String(runIdIn(command)), '--failed-only', '--json'], sample.key);
    expect(await rerun.exited, rerun.stderr()).toBe(1);
    const result = json(rerun);
    expect(result).toMatchObject({ exit_code: 1, state: 'failed', counts: { total: 2, failed: 2 } });
    expect(result.failed_tests.map((test) => test.title)).toEqual(['greets a returning user', 'greets a returning user']);
    expect(result.failed_tests[0]?.failure_group_title).toBe("expect(locator('#banner')).toHaveText at home.spec.ts:19");
  });

  it('when the CI job is cancelled (SIGTERM) while the run runs, then the run is cancelled and it exits 2', async () => {
    const command = ciRun(['--environment', 'staging', '--json'], sample.key);
    await waitUntil(() => runIdIn(command) > 0, 30_000, 'the run to be triggered');
    const runId = runIdIn(command);
    await waitForRun(sample.api, runId, ['running']);
    command.child.kill('SIGTERM');
    expect(await command.exited).toBe(2);
    expect(json(command)).toMatchObject({ exit_code: 2, run_id: runId, note: 'the CI job was cancelled (SIGTERM): the run was cancelled' });
    expect((await waitForRun(sample.api, runId)).testRun).toMatchObject({ state: 'cancelled', cancel_reason: 'the CI job was cancelled (SIGTERM)' });
  });

  it('when the run outlasts --timeout, then it is cancelled and the command exits 2', async () => {
    const command = ciRun(['--environment', 'staging', '--timeout', '0.05'], sample.key);
    expect(await command.exited).toBe(2);
    expect(command.stderr()).toContain('The run did not end within 0.05 min');
    const run = await waitForRun(sample.api, runIdIn(command));
    expect(run.testRun).toMatchObject({ state: 'cancelled', cancel_reason: 'timed out after 0.05 min waiting in CI' });
  });

  it('when the environment is unknown or the key is wrong, then it exits 2 naming the problem, and never prints the key', async () => {
    const unknown = ciRun(['--environment', 'nowhere', '--json'], sample.key);
    expect(await unknown.exited).toBe(2);
    expect(json(unknown)).toMatchObject({ exit_code: 2, run_id: null, note: expect.stringContaining('body.environment') });

    const wrongKey = 'prc_p_000000000000_111111111111111111111111111111111111111111111111';
    const refused = ciRun(['--environment', 'staging'], wrongKey);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toContain('HTTP 401: the API key was refused: check PROCTOR_API_KEY');
    expect(refused.stderr() + refused.stdout()).not.toContain(wrongKey.slice(-20));
  });

  it('when Proctor cannot be reached, then it gives up after PROCTOR_CONNECT_BUDGET_S and exits 3', async () => {
    const command = started(process.execPath, [path.join(ROOT, 'reporter/dist/cli/main.js'), 'run', '--environment', 'staging', '--json'], {
      PROCTOR_URL: 'http://127.0.0.1:9',
      PROCTOR_API_KEY: sample.key,
      PROCTOR_CONNECT_BUDGET_S: '1',
    });
    expect(await command.exited).toBe(3);
    expect(json(command)).toMatchObject({ exit_code: 3, run_id: null, state: null, note: expect.stringContaining('could not be reached') });
  });

  it.each([
    [[], '--environment is required'],
    [['--environment', 'staging', '--failed-only'], '--failed-only needs --rerun RUN_ID'],
    [['--environment', 'staging', '--shards', '0'], '--shards must be a whole number from 1 to 50'],
    [['--environment', 'staging', '--env', 'NOT A PAIR'], '--env "NOT A PAIR" is not NAME=VALUE'],
    [['--environment', 'staging', '--colour'], "Unknown option '--colour'"],
  ])('when the flags are %j, then it exits 2 saying %s, with its usage', async (args, message) => {
    const command = started(process.execPath, [path.join(ROOT, 'reporter/dist/cli/main.js'), 'run', ...args], {
      PROCTOR_URL: server.url,
      PROCTOR_API_KEY: sample.key,
    });
    expect(await command.exited).toBe(2);
    expect(command.stderr()).toContain(message);
    expect(command.stderr()).toContain('usage: proctor-ci run');
  });
});

describe('a branch the test repository lacks', () => {
  it("when the CI's branch or Run now's is missing from the test repository, then the default branch runs, and the run is shown as the asked branch's with a note and the CI job", async () => {
    const pipeline = 'https://gitlab.example.com/acme/shop/-/pipelines/2002';
    const gitlab = { GITLAB_CI: 'true', CI_PIPELINE_ID: '2002', CI_PIPELINE_URL: pipeline, CI_COMMIT_BRANCH: 'feature/banner', CI_COMMIT_SHA: '6'.repeat(40) };
    const command = ciRun(['--environment', 'staging', '--json'], small.key, gitlab);
    expect(await command.exited, command.stderr()).toBe(0);
    expect(command.stderr()).toContain(
      'proctor: the test repository has no branch "feature/banner": the tests run from "main" (the run\'s branch stays "feature/banner")',
    );
    const fromCi = json(command).run_id;

    // "Run now" sends the branch by name: the same rule, not a refusal.
    const now = await small.api.put('/api/test-runs', { environment: 'staging', branch: 'feature/banner' });
    expect(now.status, JSON.stringify(now.body)).toBe(200);
    expect(now.body.data.test_run.test_run_branch).toBe('main');
    const fromRunNow = now.body.data.test_run.id as number;
    await waitForRun(small.api, fromRunNow);

    const [project] = await server.sql<{ id: number }[]>`select project_id as id from test_runs where id = ${fromCi}`;
    const projectId = project?.id as number;
    const { userId } = await seedUser(server.sql, [projectId]);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, new Date())}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const page = async (url: string) => (await fetch(`${server.url}${url}`, { headers: { cookie, accept: 'text/html' } })).text();

    for (const runId of [fromCi, fromRunNow]) {
      const run = (await small.api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
      expect(run).toMatchObject({ state: 'passed', build_branch: 'feature/banner', test_run_branch: 'main' });
      const html = await page(`/projects/${projectId}/runs/${runId}`);
      expect(html).toContain('branch <strong class="branch">feature/banner</strong>');
      expect(html).toContain('The test repository has no branch &quot;feature/banner&quot;: its tests ran from &quot;main&quot;.');
    }
    expect(await page(`/projects/${projectId}/runs/${fromCi}`)).toContain(`<a class="ci-job" href="${pipeline}" rel="noreferrer">CI job</a>`);
    // The runs list shows the asked branch, and its filter finds the runs by it.
    const list = await page(`/projects/${projectId}/runs?branch=${encodeURIComponent('feature/banner')}`);
    for (const runId of [fromCi, fromRunNow]) expect(list).toMatch(new RegExp(`<tr data-run="${runId}">[\\s\\S]*?<td>feature/banner</td>`));
    // So do the API's filter and an assistant's answer.
    const listed = (await small.api.get(`/api/test-runs?branch=${encodeURIComponent('feature/banner')}`)).body.data.test_runs.map(
      (run: { id: number }) => run.id,
    );
    expect(listed).toEqual(expect.arrayContaining([fromCi, fromRunNow]));
    const mcp = new Client({ name: 'proctor-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${small.key}` } } }));
    try {
      const answer = (await mcp.callTool({ name: 'get_run', arguments: { run_id: fromCi } })) as { content: { text: string }[] };
      expect(JSON.parse(answer.content[0]?.text ?? '{}').run).toMatchObject({ branch: 'feature/banner', ci_job_url: pipeline });
    } finally {
      await mcp.close();
    }
  });
});

/** Each CI's own variables for a build of branch `feature` at one commit, as its documentation names them. */
const CI_VARIABLES: Record<string, { env: Record<string, string>; buildUrl: string; commit: string }> = {
  'GitLab CI': {
    env: {
      GITLAB_CI: 'true',
      CI_PIPELINE_ID: '1001',
      CI_PIPELINE_URL: 'https://gitlab.example.com/acme/shop/-/pipelines/1001',
      CI_COMMIT_BRANCH: 'feature',
      CI_COMMIT_REF_NAME: 'feature',
      CI_COMMIT_SHA: '1'.repeat(40),
    },
    buildUrl: 'https://gitlab.example.com/acme/shop/-/pipelines/1001',
    commit: '1'.repeat(40),
  },
  Jenkins: {
    env: {
      JENKINS_URL: 'https://jenkins.example.com/',
      BUILD_TAG: 'jenkins-shop-feature-7',
      BUILD_URL: 'https://jenkins.example.com/job/shop/job/feature/7/',
      BRANCH_NAME: 'feature',
      GIT_COMMIT: '2'.repeat(40),
    },
    buildUrl: 'https://jenkins.example.com/job/shop/job/feature/7/',
    commit: '2'.repeat(40),
  },
  CircleCI: {
    env: {
      CIRCLECI: 'true',
      CIRCLE_WORKFLOW_ID: '7c1a8c2e-0c5a-4a57-9a0e-1d3f0f3e2b11',
      CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/shop/123',
      CIRCLE_BRANCH: 'feature',
      CIRCLE_SHA1: '3'.repeat(40),
    },
    buildUrl: 'https://circleci.com/gh/acme/shop/123',
    commit: '3'.repeat(40),
  },
  Buildkite: {
    env: {
      BUILDKITE: 'true',
      BUILDKITE_BUILD_ID: '0190f7a4-4b1e-4d0e-9c8e-2f6a3b1c5d7e',
      BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/shop/builds/42',
      BUILDKITE_BRANCH: 'feature',
      BUILDKITE_COMMIT: '4'.repeat(40),
    },
    buildUrl: 'https://buildkite.com/acme/shop/builds/42',
    commit: '4'.repeat(40),
  },
  'Azure Pipelines': {
    env: {
      TF_BUILD: 'True',
      BUILD_BUILDID: '314',
      SYSTEM_COLLECTIONURI: 'https://dev.azure.com/acme/',
      SYSTEM_TEAMPROJECT: 'shop',
      BUILD_SOURCEBRANCH: 'refs/heads/feature',
      BUILD_SOURCEVERSION: '5'.repeat(40),
    },
    buildUrl: 'https://dev.azure.com/acme/shop/_build/results?buildId=314',
    commit: '5'.repeat(40),
  },
};

/** The command lines of docs/ci.md's example for one CI: its code block's `npx … run …` lines, without YAML's or Groovy's wrapping. */
function exampleCommands(ci: string): string[] {
  const docs = fs.readFileSync(path.join(ROOT, 'docs/ci.md'), 'utf8');
  const section = docs.split(/^### /m).find((part) => part.startsWith(`${ci}\n`));
  const block = /```\w+\n([\s\S]*?)```/.exec(section ?? '')?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => /(npx --yes @proctor\/reporter\S* run [^']*)/.exec(line)?.[1]?.trim())
    .filter((line): line is string => Boolean(line));
}

describe.concurrent("docs/ci.md's examples", () => {
  it.each(Object.keys(CI_VARIABLES))(
    "when the %s example runs with its CI variables, then the run passes and records the CI job's page, branch and commit",
    async (ci) => {
      const commands = exampleCommands(ci);
      expect(commands, `docs/ci.md's ${ci} example`).toHaveLength(1);
      const { env, buildUrl, commit } = CI_VARIABLES[ci] as (typeof CI_VARIABLES)[string];
      const job = started('bash', ['-e', '-c', commands[0] as string], { PROCTOR_URL: server.url, PROCTOR_API_KEY: small.key, CI: 'true', ...env });
      expect(await job.exited, job.stderr()).toBe(0);
      expect(job.stdout()).toMatch(/^Proctor run #\d+ passed on staging/m);
      const runId = runIdLinkedIn(job.stdout());
      const run = (await small.api.get(`/api/test-runs/${runId}`)).body.data.test_run;
      expect(run.testRun).toMatchObject({ state: 'passed', commit, build_branch: 'feature', test_run_branch: 'feature' });
      const [stored] = await server.sql`select metadata from test_runs where id = ${runId}`;
      expect(stored?.metadata).toEqual({ ci_build_url: buildUrl });
      // The feature branch of the test repository ran: its own test is there.
      expect(run.flattenedSummaryDetails.map((d: { title: string }) => d.title)).toContain('only on the feature branch');
    },
  );
});
