import * as core from '@actions/core';
import { agentsRunKey, ciBuildUrl, ciRevision } from '@proctor/reporter/ci';
import { isTerminalState, RunsClient, type RunView, type TriggerBody } from '@proctor/reporter/runs';
import { runName } from '@proctor/reporter/runs/name';
import { selectionLine } from '@proctor/reporter/runs/selection';
import { jobSummary, runVerdict } from '@proctor/reporter/runs/summary';
import { triggerWithRetry, waitForRun } from '@proctor/reporter/runs/wait';
import { parseSettings, type Settings } from './settings.ts';
import { runAgent } from './agent.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The main step, or the post step when the main one saved its state. */
export async function run(): Promise<void> {
  if (core.getState('is-post') === 'true') return post();
  core.saveState('is-post', 'true');
  try {
    await main();
  } catch (error) {
    core.setFailed(error instanceof Error ? error.message : String(error));
  }
}

/** What a refusal means to a workflow's author. */
const REFUSALS: Record<number, string> = {
  401: 'the API key was refused: check the api-key input (a Proctor key, stored as a secret)',
  403: 'the API key may not use this project: check api-key and project-id',
};

function proctorClient(settings: Pick<Settings, 'url' | 'apiKey' | 'projectId'>): RunsClient {
  return new RunsClient({ url: settings.url, apiKey: settings.apiKey, projectId: settings.projectId, refusals: REFUSALS });
}

function triggerBody(settings: Settings): TriggerBody {
  return {
    environment: settings.environment,
    ...(settings.branch ? { branch: settings.branch } : {}),
    ...(settings.build ? { build: settings.build } : {}),
    ...(settings.tags.length > 0 ? { tags: settings.tags } : {}),
    ...(settings.testCaseIds.length > 0 ? { test_case_ids: settings.testCaseIds } : {}),
    ...(settings.totalShards ? { total_shards: settings.totalShards } : {}),
    ...(settings.maxFailures ? { max_failures: settings.maxFailures } : {}),
    ...(settings.affected ? { affected: true } : {}),
    ...(settings.metadata ? { metadata: settings.metadata } : {}),
    ...(settings.envOverrides.length > 0 ? { environment_variables_overrides: settings.envOverrides } : {}),
    send_notifications: settings.sendNotifications,
    ...(process.env.GITHUB_ACTOR ? { scm_actor: process.env.GITHUB_ACTOR } : {}),
  };
}

function setOutputs(run: RunView | null, runId: number, state: string): void {
  const t = run?.testRun;
  core.setOutput('run-id', String(runId));
  core.setOutput('run-number', t?.number === undefined ? '' : String(t.number));
  core.setOutput('state', state);
  core.setOutput('total', String(t?.total_count ?? 0));
  core.setOutput('passed', String(t?.success_count ?? 0));
  core.setOutput('failed', String(t?.failed_count ?? 0));
  core.setOutput('flaky', String(t?.flaky_count ?? 0));
  core.setOutput('skipped', String(t?.skipped_count ?? 0));
  core.setOutput('duration-ms', String(t?.duration ?? 0));
  core.setOutput('summary-url', t?.summary_url ?? '');
}

async function main(): Promise<void> {
  const settings = parseSettings((name) => core.getInput(name), process.env.GITHUB_SHA || null, process.env.GITHUB_WORKSPACE || process.cwd());
  core.setSecret(settings.apiKey);
  for (const { value } of settings.envOverrides) if (value) core.setSecret(value);
  const api = proctorClient(settings);
  if (settings.mode === 'agent') return serveAsAgent(api, settings);

  // About 20 s: five tries, as a step's log can show them.
  const { id } = await triggerWithRetry(api, triggerBody(settings), { now: Date.now, sleep, warn: core.warning }, 20_000);
  core.saveState('run-id', String(id));
  core.saveState('url', settings.url);
  core.saveState('project-id', settings.projectId ?? '');
  const first = await api.read(id).catch(() => null);
  if (first?.testRun.number !== undefined) core.saveState('run-number', String(first.testRun.number));
  core.info(
    `Proctor ${runName({ id, number: first?.testRun.number })} on ${settings.environment}: ${first?.testRun.summary_url ?? `${settings.url}/api/test-runs/${id}`}`,
  );

  if (!settings.wait) {
    setOutputs(first, id, first?.testRun.state ?? 'pending');
    core.saveState('finished', 'true');
    return;
  }
  const result = await waitForRun(
    { read: () => api.read(id), now: Date.now, sleep, log: core.info, warn: core.warning },
    { timeoutMs: settings.timeoutMs, pollMs: settings.pollMs, maxBackoffMs: 60_000 },
  );
  core.saveState('finished', 'true');
  if (result.kind === 'timeout') return timedOut(api, id, settings, result.last);
  finishWith(result.run, settings);
}

/**
 * One of the workflow run's agents: it pulls units until none is left, then waits for the run's end
 * (other agents may hold its last units) and reports it as the trigger mode does. The run is the
 * agents' to end: a cancelled job leaves it to them.
 */
async function serveAsAgent(client: RunsClient, settings: Settings): Promise<void> {
  core.saveState('finished', 'true');
  const runKey = agentsRunKey(process.env);
  if (!runKey) throw new Error('mode agent runs in a GitHub Actions workflow run: no GITHUB_RUN_ID');
  // The run's id is the API's answer: the first agent of the workflow run makes the run, the others find it.
  const runId = await client.agentRun({
    environment: settings.environment,
    run_key: runKey,
    ...ciRevision(process.env),
    build_url: ciBuildUrl(process.env),
    // Fail fast: the agent that makes the run sets its limit (a server before 0.3.0 refuses the field).
    ...(settings.maxFailures ? { max_failures: settings.maxFailures } : {}),
  });
  const agent = await runAgent(settings, runId, core.info);
  if (agent.code !== 0) throw new Error(`the Proctor agent stopped: ${agent.reason}`);
  const run = await client.read(runId).catch(() => null);
  core.info(`Proctor ${runName({ id: runId, number: run?.testRun.number })}: this agent is done (${agent.reason})`);
  if (!settings.wait) {
    setOutputs(run, runId, run?.testRun.state ?? 'running');
    return;
  }
  const result = await waitForRun(
    { read: () => client.read(runId), now: Date.now, sleep, log: core.info, warn: core.warning },
    { timeoutMs: settings.timeoutMs, pollMs: settings.pollMs, maxBackoffMs: 60_000 },
  );
  if (result.kind === 'timeout') {
    setOutputs(result.last, runId, result.last?.testRun.state ?? 'running');
    core.setFailed(
      `Proctor ${runName({ id: runId, number: result.last?.testRun.number ?? run?.testRun.number })} did not end within ${settings.timeoutMs / 60_000} min after this agent's last unit`,
    );
    return;
  }
  finishWith(result.run, settings);
}

async function timedOut(client: RunsClient, id: number, settings: Settings, last: RunView | null): Promise<void> {
  const minutes = settings.timeoutMs / 60_000;
  try {
    await client.cancel(id, `timed out after ${minutes} min waiting in GitHub Actions`);
  } catch (error) {
    core.warning(`cancelling ${runName({ id, number: last?.testRun.number })} after the timeout failed: ${(error as Error).message}`);
  }
  const run = (await client.read(id).catch(() => null)) ?? last;
  setOutputs(run, id, run?.testRun.state ?? 'cancelled');
  if (run) await core.summary.addRaw(jobSummary(run, `Timed out after ${minutes} min: the run was cancelled.`)).write();
  core.setFailed(`Proctor ${runName({ id, number: run?.testRun.number })} did not end within ${minutes} min; it was cancelled`);
}

function finishWith(run: RunView, settings: Settings): void {
  const t = run.testRun;
  setOutputs(run, t.id, t.state);
  // An affected run (`affected: true`): what it left out, or why it ran every test.
  if (t.selection) core.info(`Proctor ${runName(t)}: ${selectionLine(t.selection)}`);
  void core.summary.addRaw(jobSummary(run, null)).write();
  const verdict = runVerdict(run, settings.failOnFlaky);
  if (verdict.exitCode === 0) core.info(verdict.message);
  else core.setFailed(verdict.message);
}

/** After the job: a run still waited on (the workflow was cancelled) is cancelled; a failure here only warns. */
async function post(): Promise<void> {
  const runId = Number(core.getState('run-id'));
  if (!runId || core.getState('finished') === 'true') return;
  // The number the main step read, should this step not reach the server.
  const named = runName({ id: runId, number: core.getState('run-number') ? Number(core.getState('run-number')) : null });
  try {
    const apiKey = core.getInput('api-key');
    core.setSecret(apiKey);
    const api = proctorClient({ url: core.getState('url'), apiKey, projectId: core.getState('project-id') || null });
    const run = await api.read(runId);
    if (isTerminalState(run.testRun.state)) return;
    await api.cancel(runId, 'the GitHub Actions workflow was cancelled');
    core.info(`Proctor ${runName({ id: runId, number: run.testRun.number })} cancelled, as its workflow was`);
  } catch (error) {
    core.warning(`could not cancel Proctor ${named}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
