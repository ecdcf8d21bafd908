// Likely failures first (issue 56): the pure ranking of a run's tests by their chance to fail on
// this build, from what Proctor knows of them. The server orders agents' units with it; `proctor-ci
// order` ranks a CI's own listing with it (the suite's new tests are known only there), so both
// order alike.

/** How a run's tests are handed out: longest first (balance), or likeliest to fail first. */
export const ORDER_STRATEGIES = ['duration', 'failures-first'] as const;
export type OrderStrategy = (typeof ORDER_STRATEGIES)[number];

/** Why a test is ranked before the tests with no sign of failing, strongest first. */
export const ORDER_REASONS = ['failed_last_run', 'new', 'changed', 'failure_rate', 'flaky'] as const;
export type OrderReason = (typeof ORDER_REASONS)[number];

/** What Proctor's history says of one test (or of a unit: its tests' signs put together, see unitHistory). */
export interface TestHistory {
  /** It failed in the last ended run of the environment on the build's branch (else its default branch). */
  failed_last_run: boolean;
  /** Never run in the environment. */
  new: boolean;
  /** Its file, or a file it imports, changed since the last passing run; null when that is not known. */
  changed: boolean | null;
  /** The share of the window's counted runs it failed in, 0..1. */
  failure_rate: number;
  /** Its flaky score over the window (the share of runs it was flaky in), 0..1. */
  flaky_score: number;
  /** Its expected duration; null when never run. */
  duration_ms: number | null;
}

/** The reasons a test is likely to fail, strongest first; empty for a test with no sign of it. */
export function reasonsOf(test: TestHistory): OrderReason[] {
  const reasons: OrderReason[] = [];
  if (test.failed_last_run) reasons.push('failed_last_run');
  if (test.new) reasons.push('new');
  if (test.changed === true) reasons.push('changed');
  if (test.failure_rate > 0) reasons.push('failure_rate');
  if (test.flaky_score > 0) reasons.push('flaky');
  return reasons;
}

/**
 * Which of two tests goes first: the strongest sign decides (failed last time, then new, then
 * changed: each says more of this build than the window's rates do), then the window's failure
 * rate and flaky score summed, then the longer (unknown first, as `duration` orders), so that the
 * likely failures still spread over the machines. Negative when `a` goes first.
 */
export function compareRisk(a: TestHistory, b: TestHistory): number {
  const flag = (x: boolean | null) => (x === true ? 1 : 0);
  return (
    flag(b.failed_last_run) - flag(a.failed_last_run) ||
    flag(b.new) - flag(a.new) ||
    flag(b.changed) - flag(a.changed) ||
    b.failure_rate + b.flaky_score - (a.failure_rate + a.flaky_score) ||
    longerFirst(a.duration_ms, b.duration_ms)
  );
}

/** Longest first, an unknown duration before any known one (it may be long): negative when `a` goes first. */
export function longerFirst(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return b - a;
}

export interface Ranked<T> {
  item: T;
  reasons: OrderReason[];
  /** Its place among the items with a reason, 1 first; null for an item with none. */
  risk_rank: number | null;
}

/**
 * The items in failures-first order: those with a sign of failing first (by compareRisk), then the
 * rest longest first (today's `duration` order). Stable: equal items keep the order given.
 */
export function rankByRisk<T>(items: readonly T[], historyOf: (item: T) => TestHistory): Ranked<T>[] {
  const rows = items.map((item, index) => {
    const history = historyOf(item);
    return { item, history, reasons: reasonsOf(history), index };
  });
  const risky = rows.filter((row) => row.reasons.length > 0).sort((a, b) => compareRisk(a.history, b.history) || a.index - b.index);
  const rest = rows.filter((row) => row.reasons.length === 0).sort((a, b) => longerFirst(a.history.duration_ms, b.history.duration_ms) || a.index - b.index);
  return [
    ...risky.map((row, i) => ({ item: row.item, reasons: row.reasons, risk_rank: i + 1 })),
    ...rest.map((row) => ({ item: row.item, reasons: row.reasons, risk_rank: null })),
  ];
}

/**
 * A unit's history from its tests' (a unit is run whole): it failed last time, is new or changed
 * when any of its tests is; its rates are its riskiest test's; its duration is the unit's estimate.
 */
export function unitHistory(tests: readonly TestHistory[], estimateMs: number | null): TestHistory {
  return {
    failed_last_run: tests.some((test) => test.failed_last_run),
    new: tests.some((test) => test.new),
    changed: tests.some((test) => test.changed === true) ? true : tests.some((test) => test.changed === null) ? null : false,
    failure_rate: Math.max(0, ...tests.map((test) => test.failure_rate)),
    flaky_score: Math.max(0, ...tests.map((test) => test.flaky_score)),
    duration_ms: estimateMs,
  };
}

/** A test Proctor has no history of in the environment: new, and nothing else known. */
export const NEW_TEST: TestHistory = { failed_last_run: false, new: true, changed: null, failure_rate: 0, flaky_score: 0, duration_ms: null };
