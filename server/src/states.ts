/** The states of a run, in the order a run moves through them; the last four are ends. */
export const RUN_STATES = ['pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];

export const TERMINAL_STATES = ['passed', 'failed', 'error', 'cancelled'] as const satisfies readonly RunState[];

/** Whether a run in `state` has ended. */
export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

/** A test's final outcome in a run: what its last attempt, and the ones before, add up to. */
export const OUTCOMES = ['passed', 'failed', 'flaky', 'skipped'] as const;
export type Outcome = (typeof OUTCOMES)[number];
