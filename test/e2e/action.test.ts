import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { runActionStep, toggleableProxy } from '../helpers/action.ts';
import { client } from '../helpers/http.ts';
import { EXAMPLES } from '../helpers/playwright.ts';
import { ROOT } from '../helpers/playwright.ts';
import { waitForRun, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let key: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_EXECUTOR_CONCURRENCY: '2' } });
  const project = await createProject(server.sql, { name: 'shop', repoUrl: path.resolve(EXAMPLES), repoName: 'acme/shop' });
  key = await createKey(server.sql, { projectId: project.id });
  api = client(server.url, key);
  await seedEnvironment(server.sql, project.id, 'staging');
});
afterAll(async () => server?.close());

const inputs = (extra: Record<string, string> = {}) => ({ url: server.url, 'api-key': key, environment: 'staging', 'poll-interval-seconds': '1', ...extra });
/** What a person sees in the log: the runner hides ::add-mask:: commands and masks their values. */
const visible = (output: string) =>
  output
    .split('\n')
    .filter((line) => !line.startsWith('::add-mask::'))
    .join('\n');

describe('the action against a live server', () => {
  it('when the run passes, then the step succeeds, prints the link at once, and sets every output', async () => {
    const step = runActionStep(inputs({ tags: 'smoke', metadata: '{"release":"1.2.3","attempt":2}' }));
    expect(await step.exited, step.output()).toBe(0);
    expect(step.output()).toMatch(/Proctor run #\d+ on staging: http:\/\/127\.0\.0\.1:\d+\/runs\/\d+\?token=/);
    expect(step.output()).toMatch(/running: \d+ tests done/);
    const outputs = step.outputs();
    expect(outputs).toMatchObject({ state: 'passed', total: '4', passed: '4', failed: '0', flaky: '0', skipped: '0' });
    expect(Number(outputs['duration-ms'])).toBeGreaterThan(0);
    expect(outputs['summary-url']).toContain(`/runs/${outputs['run-id']}?token=`);
    const run = (await api.get(`/api/test-runs/${outputs['run-id']}`)).body.data.test_run;
    expect(run.testRun.state).toBe('passed');
    // The log and the summary name the run as the dashboard does, by its number; run-id is for URLs and the API.
    expect(outputs['run-number']).toBe(String(run.testRun.number));
    expect(step.output()).toContain(`Proctor run #${outputs['run-number']} on staging: ${server.url}/runs/${outputs['run-id']}?token=`);
    // Markdown: the run's number is not an issue reference (a zero-width space after its escaped #).
    expect(step.summary()).toContain(`Proctor run \\#\u200b${outputs['run-number']}: passed on staging`);
    expect(step.summary()).toContain('| 4 | 4 | 0 | 0 | 0 |');
    const [stored] = await server.sql`select scm_actor, metadata from test_runs where id = ${Number(outputs['run-id'])}`;
    expect(stored).toMatchObject({ scm_actor: 'octocat', metadata: { release: '1.2.3', attempt: 2 } });
  });

  it('when the run fails, then the step fails, sets its outputs, and the summary lists the failing tests with their failure groups', async () => {
    const step = runActionStep(inputs());
    expect(await step.exited).toBe(1);
    expect(step.output()).toMatch(/::error::Proctor run #\d+ failed: 4 passed, 2 failed, 2 flaky, 2 skipped/);
    expect(step.outputs()).toMatchObject({ state: 'failed', total: '10', passed: '4', failed: '2', flaky: '2', skipped: '2' });
    const summary = step.summary();
    expect(summary).toContain('### Failing tests');
    expect(summary.match(/greets a returning user/g)).toHaveLength(2);
    // Named by their failure group's title.
    expect(summary).toContain("| expect(locator('\\#banner')).toHaveText at home.spec.ts:19 |");
    expect(summary).toContain('Flaky: lists the prices');
  });

  it('when affected and max-failures are given, then the run is made with them: its selection says what it ran, the step says it, and its limit is stored', async () => {
    const step = runActionStep(inputs({ affected: 'true', 'max-failures': '7', tags: 'smoke' }));
    expect(await step.exited, step.output()).toBe(0);
    const runId = Number(step.outputs()['run-id']);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run.max_failures).toBe(7);
    // No passing run of the environment to compare with: every test ran, and the run says why.
    expect(run.selection).toMatchObject({ mode: 'all' });
    expect(run.selection.reason).toEqual(expect.any(String));
    expect(step.output()).toContain(`Proctor run #${run.number}: every test ran: ${run.selection.reason}`);
  });

  it('when the run outlasts timeout-minutes, then the run is cancelled and the step fails', async () => {
    const step = runActionStep(inputs({ 'timeout-minutes': '0.05' }));
    expect(await step.exited).toBe(1);
    expect(step.output()).toContain('did not end within 0.05 min; it was cancelled');
    const runId = Number(step.outputs()['run-id']);
    const run = await waitForRun(api, runId);
    expect(run.testRun).toMatchObject({ state: 'cancelled', cancel_reason: expect.stringContaining('timed out') });
    expect(step.outputs().state).toBe('cancelled');
  });

  it('when the workflow is cancelled while waiting, then the post step cancels the run', async () => {
    const main = runActionStep(inputs());
    await waitUntil(() => Boolean(main.state()['run-id']), 30_000, 'the run to be triggered');
    const runId = Number(main.state()['run-id']);
    await waitForRun(api, runId, ['running']);
    main.child.kill('SIGINT');
    await main.exited;
    const post = runActionStep(inputs(), { state: main.state() });
    expect(await post.exited, post.output()).toBe(0);
    expect(post.output()).toContain(`Proctor run #${main.state()['run-number']} cancelled`);
    expect((await waitForRun(api, runId)).testRun).toMatchObject({ state: 'cancelled', cancel_reason: 'the GitHub Actions workflow was cancelled' });
  });

  it('when the post step cannot reach the server, then it only warns', async () => {
    const post = runActionStep(inputs({ url: 'http://127.0.0.1:9' }), {
      state: { 'is-post': 'true', 'run-id': '123456', url: 'http://127.0.0.1:9', finished: 'false' },
    });
    expect(await post.exited).toBe(0);
    // No number was read: the run is named by its id, and said to be one.
    expect(post.output()).toContain('::warning::could not cancel Proctor run id 123456');
  });

  it('when the key is wrong, then the step fails at once with a clear message and the key is not printed', async () => {
    const wrongKey = 'prc_p_000000000000_111111111111111111111111111111111111111111111111';
    const step = runActionStep(inputs({ 'api-key': wrongKey }));
    expect(await step.exited).toBe(1);
    expect(step.output()).toContain('::error::HTTP 401: the API key was refused');
    expect(step.output()).toContain(`::add-mask::${wrongKey}`);
    expect(visible(step.output())).not.toContain(wrongKey);
    expect(visible(step.output())).not.toContain(wrongKey.slice(-20));
  });

  it('when env-overrides are given, then their values are masked', async () => {
    const step = runActionStep(inputs({ tags: 'smoke', 'env-overrides': 'API_TOKEN=s3cr3t-value\n# comment\nMODE=fast', wait: 'false' }));
    expect(await step.exited).toBe(0);
    expect(step.output()).toContain('::add-mask::s3cr3t-value');
    // Not waiting: the state when the action read it, before any executor finished it.
    expect(['pending', 'queued', 'running']).toContain(step.outputs().state);
    await waitForRun(api, Number(step.outputs()['run-id']));
  });

  it('when the server is unreachable for a while during the wait, then the wait survives and the step ends with the run', async () => {
    const [, port] = /:(\d+)$/.exec(server.url) as RegExpExecArray;
    const proxy = await toggleableProxy(Number(port));
    try {
      const step = runActionStep(inputs({ url: proxy.url, tags: 'smoke' }));
      await waitUntil(() => Boolean(step.state()['run-id']), 30_000, 'the run to be triggered');
      await proxy.down();
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await proxy.up();
      expect(await step.exited, step.output()).toBe(0);
      expect(step.output()).toContain('::warning::reading the run failed');
      expect(step.output()).toMatch(/the server answers again after \d+ failed read/);
      expect(step.outputs().state).toBe('passed');
    } finally {
      await proxy.close();
    }
  });
});

describe('the action as an agent', () => {
  it('when two jobs of one workflow run use mode agent, one with proctor-ci and one with the server package, then they serve one run of agents in their workspace, and each reports its end', async () => {
    // The reporter package's proctor-ci (the default's) and the server package's proctor, as a workflow would run them from this checkout.
    const commands = [
      `${process.execPath} ${path.join(ROOT, 'reporter/dist/cli/main.js')}`,
      `${process.execPath} --import tsx ${path.join(ROOT, 'server/src/bin.ts')}`,
    ];
    const env = { GITHUB_RUN_ID: '555001', GITHUB_WORKSPACE: path.resolve(EXAMPLES) };
    // Fail fast's limit, above the suite's failures: the agent that makes the run sets it.
    const steps = commands.map((command, i) =>
      runActionStep(inputs({ mode: 'agent', 'agent-command': command, 'agent-name': `job-${i + 1}`, 'max-failures': '50' }), { env }),
    );
    const codes = await Promise.all(steps.map((step) => step.exited));
    // The sample suite fails: each job says so, with the run's counts.
    expect(codes, steps.map((step) => step.output()).join('\n')).toEqual([1, 1]);
    for (const step of steps) {
      expect(step.output()).toMatch(/Proctor run #\d+: this agent is done/);
      expect(step.outputs()).toMatchObject({ state: 'failed', total: '10', passed: '4', failed: '2', flaky: '2', skipped: '2' });
      // The key reached the agent through its environment only: never in the log.
      expect(visible(step.output())).not.toContain(key);
    }
    const runId = Number(steps[0]?.outputs()['run-id']);
    expect(Number(steps[1]?.outputs()['run-id'])).toBe(runId);
    const [run] = await server.sql<{ distribution: string; run_key: string; max_failures: number | null }[]>`
      select distribution, run_key, max_failures from test_runs where id = ${runId}`;
    expect(run).toEqual({ distribution: 'agents', run_key: 'agents-github-555001-1', max_failures: 50 });
    const agents = await server.sql<{ name: string }[]>`select name from test_run_agents where test_run_id = ${runId} order by name`;
    expect(agents.map((agent) => agent.name)).toEqual(expect.arrayContaining(['job-1', 'job-2']));
  });

  it('when the agent cannot start, then the step fails with its reason', async () => {
    const step = runActionStep(inputs({ mode: 'agent', 'agent-command': '/nonexistent/proctor' }), { env: { GITHUB_RUN_ID: '555002' } });
    expect(await step.exited).toBe(1);
    expect(step.output()).toMatch(/::error::the Proctor agent stopped: could not start \/nonexistent\/proctor/);
  });
});
