import { isTerminal } from '../../server/src/states.ts';
import { TransientError, type RunView } from './client.ts';

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

export type WaitResult = { kind: 'ended'; run: RunView } | { kind: 'timeout'; last: RunView | null };

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
  for (;;) {
    try {
      const run = await deps.read();
      if (failures > 0) deps.log(`the server answers again after ${failures} failed read(s)`);
      failures = 0;
      last = run;
      const line = progress(run);
      if (line !== lastLine) deps.log(line);
      lastLine = line;
      if (isTerminal(run.testRun.state)) return { kind: 'ended', run };
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      failures++;
      if (failures === 1 || failures % 10 === 0) deps.warn(`reading the run failed (${error.message}); still waiting`);
    }
    const pause = failures > 0 ? Math.min(options.maxBackoffMs, options.pollMs * 2 ** Math.min(failures - 1, 6)) : options.pollMs;
    if (deps.now() - started + pause > options.timeoutMs) return { kind: 'timeout', last };
    await deps.sleep(pause);
  }
}
