import { isTerminalState, type RunsClient, type RunView, type TriggerBody, type TriggeredRun, TransientError } from './client.ts';

export interface WaitDeps {
  read(): Promise<RunView>;
  /** Milliseconds, as Date.now. */
  now(): number;
  sleep(ms: number): Promise<void>;
  log(line: string): void;
  warn(line: string): void;
}

export interface WaitOptions {
  timeoutMs: number;
  pollMs: number;
  /** The longest wait between reads while the server does not answer. */
  maxBackoffMs: number;
}

/** `unreachable`: the reads that failed since the last answer (if any) made no connection at all. */
export type WaitResult = { kind: 'ended'; run: RunView } | { kind: 'timeout'; last: RunView | null; unreachable: boolean };

function progress(run: RunView): string {
  const t = run.testRun;
  const done = t.success_count + t.failed_count + t.flaky_count + t.skipped_count;
  return `${t.state}: ${done} tests done (${t.success_count} passed, ${t.failed_count} failed, ${t.flaky_count} flaky, ${t.skipped_count} skipped)`;
}

/**
 * Reads the run until it ends or the time is up: a progress line when it changes, one read per
 * poll interval, transient failures (network, 429, 5xx) waited out with a growing pause, anything
 * else thrown.
 */
export async function waitForRun(deps: WaitDeps, options: WaitOptions): Promise<WaitResult> {
  const started = deps.now();
  let last: RunView | null = null;
  let lastLine = '';
  let failures = 0;
  // Whether the failing reads since the last answer made no connection at all.
  let unreachable: boolean | undefined;
  for (;;) {
    try {
      const run = await deps.read();
      if (failures > 0) deps.log(`the server answers again after ${failures} failed read(s)`);
      failures = 0;
      unreachable = false;
      last = run;
      const line = progress(run);
      if (line !== lastLine) deps.log(line);
      lastLine = line;
      if (isTerminalState(run.testRun.state)) return { kind: 'ended', run };
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      failures++;
      unreachable = error.unreachable;
      if (failures === 1 || failures % 10 === 0) deps.warn(`reading the run failed (${error.message}); still waiting`);
    }
    const pause = failures > 0 ? Math.min(options.maxBackoffMs, options.pollMs * 2 ** Math.min(failures - 1, 6)) : options.pollMs;
    if (deps.now() - started + pause > options.timeoutMs) return { kind: 'timeout', last, unreachable: unreachable ?? false };
    await deps.sleep(pause);
  }
}

/**
 * The trigger, tried again while it fails transiently (the run does not exist yet, so this is the
 * one request worth repeating) for up to `budgetMs`, with a growing pause; then its last error.
 */
export async function triggerWithRetry(
  client: Pick<RunsClient, 'trigger'>,
  body: TriggerBody,
  deps: Pick<WaitDeps, 'now' | 'sleep' | 'warn'>,
  budgetMs: number,
): Promise<TriggeredRun> {
  const started = deps.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.trigger(body);
    } catch (error) {
      const left = budgetMs - (deps.now() - started);
      if (!(error instanceof TransientError) || left <= 0) throw error;
      deps.warn(`triggering the run failed (${error.message}); trying again`);
      await deps.sleep(Math.min(2000 * attempt, left));
    }
  }
}
