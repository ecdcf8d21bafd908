import * as core from '@actions/core';
import { agentsRunKey, ciBuildUrl, ciRevision } from '../../reporter/src/ci.ts';
import { FatalError, ProctorClient, type RunView, TransientError } from './client.ts';
import { parseSettings, type Settings } from './settings.ts';
import { runAgent } from './agent.ts';
import { jobSummary } from './summary.ts';
import { isTerminal } from '../../server/src/states.ts';
import { waitForRun } from './wait.ts';

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

function triggerBody(settings: Settings): Record<string, unknown> {
  return {
    environment: settings.environment,
    ...(settings.branch ? { branch: settings.branch } : {}),
    ...(settings.build ? { build: settings.build } : {}),
    ...(settings.tags.length > 0 ? { tags: settings.tags } : {}),
    ...(settings.testCaseIds.length > 0 ? { test_case_ids: settings.testCaseIds } : {}),
    ...(settings.totalShards ? { total_shards: settings.totalShards } : {}),
    ...(settings.metadata ? { metadata: settings.metadata } : {}),
    ...(settings.envOverrides.length > 0 ? { environment_variables_overrides: settings.envOverrides } : {}),
    send_notifications: settings.sendNotifications,
    ...(process.env.GITHUB_ACTOR ? { scm_actor: process.env.GITHUB_ACTOR } : {}),
  };
}

/** A few tries for the trigger: a transient failure before the run exists is worth waiting out. */
async function triggerWithRetry(client: ProctorClient, body: Record<string, unknown>): Promise<{ id: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.trigger(body);
    } catch (error) {
      if (!(error instanceof TransientError) || attempt >= 5) throw error;
      core.warning(`triggering the run failed (${error.message}); trying again`);
      await sleep(2000 * attempt);
    }
  }
}

function setOutputs(run: RunView | null, runId: number, state: string): void {
  const t = run?.testRun;
  core.setOutput('run-id', String(runId));
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
  const client = new ProctorClient(settings);
  if (settings.mode === 'agent') return serveAsAgent(client, settings);

  const { id } = await triggerWithRetry(client, triggerBody(settings));
  core.saveState('run-id', String(id));
  core.saveState('url', settings.url);
  core.saveState('project-id', settings.projectId ?? '');
  const first = await client.read(id).catch(() => null);
  core.info(`Proctor run #${id} on ${settings.environment}: ${first?.testRun.summary_url ?? `${settings.url}/api/test-runs/${id}`}`);

  if (!settings.wait) {
    setOutputs(first, id, first?.testRun.state ?? 'pending');
    core.saveState('finished', 'true');
    return;
  }
  const result = await waitForRun(
    { read: () => client.read(id), now: Date.now, sleep, log: core.info, warn: core.warning },
    { timeoutMs: settings.timeoutMs, pollMs: settings.pollMs, maxBackoffMs: 60_000 },
  );
  core.saveState('finished', 'true');
  if (result.kind === 'timeout') return timedOut(client, id, settings, result.last);
  finishWith(result.run, settings);
}

/**
 * One of the workflow run's agents: it pulls units until none is left, then waits for the run's end
 * (other agents may hold its last units) and reports it as the trigger mode does. The run is the
 * agents' to end: a cancelled job leaves it to them.
 */
async function serveAsAgent(client: ProctorClient, settings: Settings): Promise<void> {
  core.saveState('finished', 'true');
  const runKey = agentsRunKey(process.env);
  if (!runKey) throw new Error('mode agent runs in a GitHub Actions workflow run: no GITHUB_RUN_ID');
  // The run's id is the API's answer: the first agent of the workflow run makes the run, the others find it.
  const runId = await client.agentRun({ environment: settings.environment, run_key: runKey, ...ciRevision(process.env), build_url: ciBuildUrl(process.env) });
  const agent = await runAgent(settings, runId, core.info);
  if (agent.code !== 0) throw new Error(`the Proctor agent stopped: ${agent.reason}`);
  core.info(`Proctor run #${runId}: this agent is done (${agent.reason})`);
  if (!settings.wait) {
    const run = await client.read(runId).catch(() => null);
    setOutputs(run, runId, run?.testRun.state ?? 'running');
    return;
  }
  const result = await waitForRun(
    { read: () => client.read(runId), now: Date.now, sleep, log: core.info, warn: core.warning },
    { timeoutMs: settings.timeoutMs, pollMs: settings.pollMs, maxBackoffMs: 60_000 },
  );
  if (result.kind === 'timeout') {
    setOutputs(result.last, runId, result.last?.testRun.state ?? 'running');
    core.setFailed(`Proctor run #${runId} did not end within ${settings.timeoutMs / 60_000} min after this agent's last unit`);
    return;
  }
  finishWith(result.run, settings);
}

async function timedOut(client: ProctorClient, id: number, settings: Settings, last: RunView | null): Promise<void> {
  const minutes = settings.timeoutMs / 60_000;
  try {
    await client.cancel(id, `timed out after ${minutes} min waiting in GitHub Actions`);
  } catch (error) {
    core.warning(`cancelling run #${id} after the timeout failed: ${(error as Error).message}`);
  }
  const run = (await client.read(id).catch(() => null)) ?? last;
  setOutputs(run, id, run?.testRun.state ?? 'cancelled');
  if (run) await core.summary.addRaw(jobSummary(run, `Timed out after ${minutes} min: the run was cancelled.`)).write();
  core.setFailed(`Proctor run #${id} did not end within ${minutes} min; it was cancelled`);
}

function finishWith(run: RunView, settings: Settings): void {
  const t = run.testRun;
  setOutputs(run, t.id, t.state);
  void core.summary.addRaw(jobSummary(run, null)).write();
  const counts = `${t.success_count} passed, ${t.failed_count} failed, ${t.flaky_count} flaky, ${t.skipped_count} skipped`;
  if (t.state !== 'passed') {
    core.setFailed(`Proctor run #${t.id} ${t.state}: ${counts}${t.error_reason ? ` (${t.error_reason.split('\n')[0]})` : ''}. ${t.summary_url}`);
  } else if (settings.failOnFlaky && t.flaky_count > 0) {
    core.setFailed(`Proctor run #${t.id} passed with ${t.flaky_count} flaky test(s), and fail-on-flaky is set. ${t.summary_url}`);
  } else {
    core.info(`Proctor run #${t.id} passed: ${counts}`);
  }
}

/** After the job: a run still waited on (the workflow was cancelled) is cancelled; a failure here only warns. */
async function post(): Promise<void> {
  const runId = Number(core.getState('run-id'));
  if (!runId || core.getState('finished') === 'true') return;
  try {
    const apiKey = core.getInput('api-key');
    core.setSecret(apiKey);
    const client = new ProctorClient({ url: core.getState('url'), apiKey, projectId: core.getState('project-id') || null });
    const run = await client.read(runId);
    if (isTerminal(run.testRun.state)) return;
    await client.cancel(runId, 'the GitHub Actions workflow was cancelled');
    core.info(`Proctor run #${runId} cancelled, as its workflow was`);
  } catch (error) {
    core.warning(`could not cancel Proctor run #${runId}: ${error instanceof FatalError || error instanceof Error ? error.message : String(error)}`);
  }
}
