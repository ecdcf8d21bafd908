import { isTerminalState, RunsClient, type RunSelection, type RunSummaryDetail, type RunView } from '../runs/client.ts';
import { selectionLine } from '../runs/selection.ts';
import { runName } from '../runs/name.ts';
import { runVerdict, textSummary } from '../runs/summary.ts';
import { triggerWithRetry, waitForRun } from '../runs/wait.ts';
import { EXIT, exitCodeOf, type ExitCode, openCommand } from './exit.ts';
import { parseRunSettings, RUN_USAGE, type RunSettings } from './run-settings.ts';

const REFUSALS: Record<number, string> = {
  401: 'the API key was refused: check PROCTOR_API_KEY (a Proctor key, stored as a CI secret)',
  403: 'the API key may not use this project: check PROCTOR_API_KEY and PROCTOR_PROJECT_ID',
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const say = (line: string) => process.stderr.write(`proctor: ${line}\n`);

/** The --json document: typed fields a script reads, never the text above it. */
export interface RunResultJson {
  exit_code: ExitCode;
  /** The run in URLs and the API. */
  run_id: number | null;
  /** Its number in its project, what the dashboard and the lines above name it by; null when it was not read. */
  run_number: number | null;
  state: string | null;
  summary_url: string | null;
  /** Why the command ended as it did when the run's state alone does not say (timeout, signal, unreachable, refusal). */
  note: string | null;
  environment: string | null;
  counts: { total: number; passed: number; failed: number; flaky: number; skipped: number } | null;
  duration_ms: number | null;
  error_reason: string | null;
  failed_tests: ResultTest[];
  flaky_tests: ResultTest[];
  /** What a run made with --affected ran (`mode`, `base_commit`, `reason`, `left_out`); null when not asked or not read. */
  selection: RunSelection | null;
}

type ResultTest = Pick<RunSummaryDetail, 'test_case_id' | 'title' | 'file_path' | 'runner_project' | 'snoozed' | 'error_message' | 'failure_group_id'> & {
  failure_group_title: string | null;
};

function resultTests(run: RunView, status: string): ResultTest[] {
  return run.flattenedSummaryDetails
    .filter((d) => d.status === status)
    .map((d) => ({
      test_case_id: d.test_case_id,
      title: d.title,
      file_path: d.file_path,
      runner_project: d.runner_project,
      snoozed: d.snoozed,
      error_message: d.error_message,
      failure_group_id: d.failure_group_id,
      failure_group_title: d.failure_group_title ?? null,
    }));
}

function resultJson(exitCode: ExitCode, run: RunView | null, runId: number | null, note: string | null): RunResultJson {
  const t = run?.testRun;
  return {
    exit_code: exitCode,
    run_id: runId,
    run_number: t?.number ?? null,
    state: t?.state ?? null,
    summary_url: t?.summary_url ?? null,
    note,
    environment: t?.environment_name ?? null,
    counts: t ? { total: t.total_count, passed: t.success_count, failed: t.failed_count, flaky: t.flaky_count, skipped: t.skipped_count } : null,
    duration_ms: t?.duration ?? null,
    error_reason: t?.error_reason ?? null,
    failed_tests: run ? resultTests(run, 'failed') : [],
    flaky_tests: run ? resultTests(run, 'flaky') : [],
    selection: t?.selection ?? null,
  };
}

/** Set by the first end: a signal's cancel and the wait may both reach one, and only the first speaks. */
let finished = false;
/** The run's number in its project, once read: what the lines name it by. */
let runNumber: number | null = null;

/**
 * Prints how the command ended (the summary, or the JSON document) and exits with its code once
 * stdout has taken it all (a pipe may be asynchronous). Never settles: nothing runs after it.
 */
function finish(settings: RunSettings | null, exitCode: ExitCode, run: RunView | null, runId: number | null, note: string | null): Promise<never> {
  if (finished) return new Promise<never>(() => {});
  finished = true;
  if (note && !settings?.json) say(note);
  const selection = run?.testRun.selection;
  if (selection) say(selectionLine(selection));
  const text = settings?.json ? JSON.stringify(resultJson(exitCode, run, runId, note), null, 2) : run ? textSummary(run) : '';
  process.stdout.write(text ? `${text}\n` : '', () => process.exit(exitCode));
  return new Promise<never>(() => {});
}

/** An error before or around the run: what it means for the exit code. */
function failure(error: unknown): { code: ExitCode; note: string } {
  return { code: exitCodeOf(error), note: error instanceof Error ? error.message : String(error) };
}

/**
 * A run cancelled on the command's behalf (a signal, the timeout), read back for its summary.
 * A server that does not answer leaves the run to its own end.
 */
async function cancelRun(client: RunsClient, runId: number, reason: string): Promise<RunView | null> {
  try {
    await client.cancel(runId, reason);
  } catch (error) {
    say(`cancelling ${runName({ id: runId, number: runNumber })} failed: ${(error as Error).message}`);
  }
  return client.read(runId).catch(() => null);
}

export async function runCommand(args: string[], env: NodeJS.ProcessEnv): Promise<never> {
  const opened = openCommand(args, RUN_USAGE, () => parseRunSettings(args, env), say);
  if ('exit' in opened) return finish(null, opened.exit, null, null, null);
  const { settings } = opened;
  const client = new RunsClient({ url: settings.url, apiKey: settings.apiKey, projectId: settings.projectId, refusals: REFUSALS });

  // CI's cancel button: the run is cancelled with the job, as soon as its id is known.
  let runId: number | null = null;
  let stopping: string | null = null;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal: the person (or CI) will not wait for the cancel.
    if (stopping) process.exit(EXIT.error);
    stopping = `the CI job was cancelled (${signal})`;
    if (runId !== null) void cancelOnSignal(client, settings, runId, stopping);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  try {
    const triggered = await triggerWithRetry(client, settings.body, { now: Date.now, sleep, warn: say }, settings.connectBudgetMs);
    runId = triggered.id;
    // The same rule as the dashboard's "Run now", said where the person reads it.
    const asked = settings.body.build?.branch;
    if (asked && triggered.test_run_branch && triggered.test_run_branch !== asked)
      say(`the test repository has no branch "${asked}": the tests run from "${triggered.test_run_branch}" (the run's branch stays "${asked}")`);
  } catch (error) {
    const { code, note } = failure(error);
    return finish(settings, code, null, null, note);
  }
  if (stopping) return cancelOnSignal(client, settings, runId, stopping);
  const first = await client.read(runId).catch(() => null);
  runNumber = first?.testRun.number ?? null;
  say(
    `${runName({ id: runId, number: runNumber })} on ${settings.body.environment}: ${first?.testRun.summary_url ?? `${settings.url}/api/test-runs/${runId}`}`,
  );
  return awaitEnd(client, settings, runId, () => stopping);
}

async function cancelOnSignal(client: RunsClient, settings: RunSettings, runId: number, reason: string): Promise<never> {
  say(`${reason}: cancelling ${runName({ id: runId, number: runNumber })}`);
  const run = await cancelRun(client, runId, reason);
  return finish(settings, EXIT.error, run, runId, `${reason}: the run was cancelled`);
}

/** `stoppedBy`: the signal that is cancelling the run, whose cancel the wait may see first. */
async function awaitEnd(client: RunsClient, settings: RunSettings, runId: number, stoppedBy: () => string | null): Promise<never> {
  const id = runId;
  let result;
  try {
    result = await waitForRun(
      { read: () => client.read(id), now: Date.now, sleep, log: say, warn: say },
      { timeoutMs: settings.timeoutMs, pollMs: settings.pollMs, maxBackoffMs: 60_000 },
    );
  } catch (error) {
    const { code, note } = failure(error);
    return finish(settings, code, null, id, note);
  }
  if (result.kind === 'timeout') {
    const minutes = settings.timeoutMs / 60_000;
    const run = await cancelRun(client, id, `timed out after ${minutes} min waiting in CI`);
    const ended = run && isTerminalState(run.testRun.state) ? ' and was cancelled' : '';
    const code = result.unreachable && !run ? EXIT.unreachable : EXIT.error;
    return finish(settings, code, run ?? result.last, id, `The run did not end within ${minutes} min${ended}.`);
  }
  const stopped = stoppedBy();
  if (stopped && result.run.testRun.state === 'cancelled') return finish(settings, EXIT.error, result.run, id, `${stopped}: the run was cancelled`);
  const verdict = runVerdict(result.run, settings.failOnFlaky);
  return finish(settings, verdict.exitCode, result.run, id, verdict.exitCode === 1 && result.run.testRun.state === 'passed' ? verdict.message : null);
}
