import { getJson, type TransportOptions } from '../api/transport.ts';
import type { SnoozeListAnswer, WireSnooze } from '../api/wire.ts';

/** Pages of 100 snoozes read at most: a project with more active ones than this is not forgiven. */
const MAX_PAGES = 20;
/** Reading at start is tried this many times: a server that does not answer forgives nothing. */
const READ_ATTEMPTS = 3;

export type ActiveSnoozes = { ok: true; snoozes: WireSnooze[] } | { ok: false; reason: string };

/**
 * The environment's active snoozes, read once at the start of the invocation. Never rejects: a
 * failure to read them is an answer of its own, which forgives nothing (fail closed).
 */
export async function readActiveSnoozes(transport: TransportOptions, environment: string): Promise<ActiveSnoozes> {
  const options = { ...transport, maxAttempts: Math.min(transport.maxAttempts, READ_ATTEMPTS) };
  const snoozes: WireSnooze[] = [];
  try {
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await getJson<SnoozeListAnswer>(
        options,
        `/api/snoozes?status=active&per_page=100&page=${page}&environment=${encodeURIComponent(environment)}`,
      );
      snoozes.push(...answer.data.snoozes);
      if (page >= answer.pagination.total_pages) return { ok: true, snoozes };
    }
    return { ok: false, reason: `more than ${MAX_PAGES * 100} active snoozes` };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

export interface FailedTest {
  id: string;
  title: string;
}

export type Verdict =
  | { kind: 'forgiven'; covered: { test: FailedTest; snooze: WireSnooze }[] }
  | { kind: 'not-forgiven'; cause: 'unread' | 'other-errors' | 'not-snoozed'; reason: string; covered: number; uncovered: FailedTest[] };

/**
 * Whether a failed invocation passes after all: only when every test that failed is covered by a
 * snooze still active at `now`, and nothing else failed (an error outside the tests, a timeout, an
 * interrupt). Snoozed tests ran and their results were reported either way.
 */
export function judge(status: string, failed: FailedTest[], otherErrors: number, snoozes: ActiveSnoozes, now: Date): Verdict | null {
  if (status !== 'failed' || failed.length === 0) return null;
  if (!snoozes.ok)
    return { kind: 'not-forgiven', cause: 'unread', reason: `the snoozes could not be read at start (${snoozes.reason})`, covered: 0, uncovered: failed };
  const active = snoozes.snoozes.filter((snooze) => new Date(snooze.snooze_until) > now);
  const covered = failed.flatMap((test) => {
    const snooze = active.find((s) => s.test_ids.includes(test.id));
    return snooze ? [{ test, snooze }] : [];
  });
  const uncovered = failed.filter((test) => !covered.some((c) => c.test === test));
  if (otherErrors > 0)
    return { kind: 'not-forgiven', cause: 'other-errors', reason: `${otherErrors} error(s) outside the tests`, covered: covered.length, uncovered };
  if (uncovered.length > 0)
    return { kind: 'not-forgiven', cause: 'not-snoozed', reason: `${uncovered.length} failed test(s) not snoozed`, covered: covered.length, uncovered };
  return { kind: 'forgiven', covered };
}

/** Whether a verdict is worth a line: not when none of the failures was snoozed, which says nothing new. */
export function worthSaying(verdict: Verdict): boolean {
  return verdict.kind === 'forgiven' || verdict.cause === 'unread' || verdict.covered > 0;
}

/** The summary line of a verdict. */
export function describeVerdict(verdict: Verdict): string {
  if (verdict.kind === 'forgiven') {
    const items = verdict.covered.map(
      ({ test, snooze }) => `${test.title} (until ${snooze.snooze_until.slice(0, 10)}${snooze.source === 'auto' ? ', quarantined' : ''})`,
    );
    return `[proctor] ${verdict.covered.length} failed test(s) forgiven, all snoozed in Proctor: ${items.slice(0, 10).join('; ')}${items.length > 10 ? `; and ${items.length - 10} more` : ''}. Playwright's result is passed (PROCTOR_FORGIVE_SNOOZED=false to keep it failed)`;
  }
  const names = verdict.uncovered
    .slice(0, 5)
    .map((test) => test.title)
    .join('; ');
  return `[proctor] ${verdict.covered} failed test(s) snoozed, nothing forgiven: ${verdict.reason}${names ? ` (${names}${verdict.uncovered.length > 5 ? '; ...' : ''})` : ''}`;
}
