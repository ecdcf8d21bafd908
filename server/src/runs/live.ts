import type { Sql } from '../db.ts';
import { isTerminal } from '../states.ts';
import { type LiveResult, positionNow, type RunProgress } from './live-store.ts';

// A run under way as server-sent events (issue 55, point 3). Nothing here remembers what a writer
// did: each stream reads the database, so that a result stored by another process or node shows as
// soon as one stored here. A stream looks at the run's row (one primary-key read) every
// `LIVE_POLL_MS`, and reads the results only when the row moved.
//
// A position says which results a client has: every final result of a transaction below a horizon
// (a snapshot's xmin: those transactions have all ended), and those of the transactions named
// above it. It is each event's id, so that EventSource's Last-Event-ID resumes a stream after a
// disconnect with nothing lost and nothing twice.

/** A position names at most this many transactions above its horizon; more is refused. */
const MAX_SEEN = 2000;

export interface Position {
  horizon: string;
  seen: string[];
}

export function formatPosition(position: Position): string {
  return [position.horizon, ...position.seen].join('.');
}

/** A position from an event id or the page's `from`; null when it is not one. */
export function parsePosition(text: string | undefined | null): Position | null {
  if (!text || text.length > 21 * (MAX_SEEN + 1) || !/^\d{1,20}(\.\d{1,20})*$/.test(text)) return null;
  const [horizon, ...seen] = text.split('.');
  return { horizon: horizon as string, seen };
}

/** The run's position as a page reads it now: its stream starts there. */
export async function livePosition(sql: Sql, runId: number): Promise<string> {
  return formatPosition(await positionNow(sql, runId));
}

/** The position after a read: the read's horizon, and the transactions above it whose results were sent. */
export function advance(position: Position, horizon: string, results: LiveResult[]): Position {
  const above = (xid: string) => BigInt(xid) >= BigInt(horizon);
  const seen = new Set(position.seen.filter(above));
  for (const result of results) if (above(result.xid)) seen.add(result.xid);
  const next = BigInt(horizon) > BigInt(position.horizon) ? horizon : position.horizon;
  return { horizon: next, seen: [...seen].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)) };
}

/** The run's progress as the page shows it: with the time left, from the tests' durations and how many run side by side. */
export function presentProgress(progress: RunProgress) {
  const { elapsed_ms: elapsed, done_ms: doneMs, left_test_ms: leftTestMs } = progress;
  // How many tests ran side by side so far: their durations over the wall-clock time.
  const parallel = elapsed && elapsed > 0 && doneMs > 0 ? doneMs / elapsed : null;
  const left = progress.done >= progress.total ? 0 : parallel && leftTestMs !== null ? Math.round(leftTestMs / parallel) : null;
  return {
    state: progress.state,
    total: progress.total,
    done: progress.done,
    passed: progress.passed,
    failed: progress.failed,
    flaky: progress.flaky,
    skipped: progress.skipped,
    snoozed: progress.snoozed,
    time_left_ms: isTerminal(progress.state) ? 0 : left,
  };
}
