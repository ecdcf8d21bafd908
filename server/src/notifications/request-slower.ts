import { markdownCode, markdownText } from '@proctor/reporter/markdown';
import type { Tx } from '../db.ts';
import { SHIFT_RULES } from '../durations/index.ts';
import { type BranchDuration, type DurationAgainstBase, durationsAgainstBranch, durationsOnRequestBranch } from './slower-store.ts';

// The tests a pull (merge) request's run passed slower than they pass on the branch it merges
// into: a part of the request's comment of its own, after the run's section. One run is all a
// request may have, so the run's duration is held against the test's history there, not against
// one earlier run: it must be above the slowest of its last passing runs there (at least 10 of
// them), and above their median by the duration shifts' share and milliseconds (20%, 50 ms): a
// test whose duration swings as much on the base branch is not news. Each names the run of the
// request's branch where it started: the first of the runs it has passed as slow in since.

export const REQUEST_SLOWER_RULES = {
  /** The base branch's newest passing runs of the test that are its history… */
  history: 20,
  /** …of which it needs at least this many. */
  minHistory: 10,
  /** Above the history's median by this share… */
  minRise: SHIFT_RULES.minRise,
  /** …and this many milliseconds. */
  minRiseMs: SHIFT_RULES.minRiseMs,
  /** Tests the comment names before "and N more". */
  listed: 10,
  /** The request branch's newest runs read for where a slowdown started. */
  branchRuns: 50,
} as const;

export interface SlowerInRun {
  test_case_id: string;
  title: string;
  file_path: string;
  duration_ms: number;
  median_ms: number;
  /** The slowest of its history on the base branch. */
  slowest_ms: number;
  /** Where it started: the request branch's first run of the streak of runs it passed as slow in (this run when none before). */
  started_run_id: number | null;
  started_run_number: number | null;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Whether a duration is slower than a history of the base branch says the test runs: above its slowest, and its median by the share and the milliseconds. */
function isSlower(durationMs: number, typical: number, slowest: number): boolean {
  return durationMs > slowest && durationMs >= typical * (1 + REQUEST_SLOWER_RULES.minRise) && durationMs - typical >= REQUEST_SLOWER_RULES.minRiseMs;
}

/** Which of the run's tests passed slower than their history says they do, the largest rise first. */
export function slowerThanHistory(rows: DurationAgainstBase[]): SlowerInRun[] {
  const slower: SlowerInRun[] = [];
  for (const row of rows) {
    if (row.history_ms.length < REQUEST_SLOWER_RULES.minHistory) continue;
    const typical = median(row.history_ms);
    const slowest = Math.max(...row.history_ms);
    if (!isSlower(row.duration_ms, typical, slowest)) continue;
    slower.push({
      test_case_id: row.test_case_id,
      title: row.title,
      file_path: row.file_path,
      duration_ms: row.duration_ms,
      median_ms: typical,
      slowest_ms: slowest,
      started_run_id: null,
      started_run_number: null,
    });
  }
  return slower.sort(
    (a, b) => b.duration_ms / Math.max(b.median_ms, 1) - a.duration_ms / Math.max(a.median_ms, 1) || a.test_case_id.localeCompare(b.test_case_id),
  );
}

/**
 * Where each slower test's slowdown started on the request's branch: walking its runs back from
 * this one (`branch`, the newest first), the earliest of the runs it passed slower in before one
 * it passed within its usual durations (runs it did not pass in neither start nor end a streak).
 */
export function withStart(slower: SlowerInRun[], branch: BranchDuration[]): SlowerInRun[] {
  return slower.map((test) => {
    let started: BranchDuration | null = null;
    for (const row of branch) {
      if (row.test_case_id !== test.test_case_id) continue;
      if (!isSlower(row.duration_ms, test.median_ms, test.slowest_ms)) break;
      started = row;
    }
    return started ? { ...test, started_run_id: started.run_id, started_run_number: started.run_number } : test;
  });
}

const seconds = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`);

/** The comment's lines of them; null when there is none. */
export function slowerLines(slower: SlowerInRun[], baseBranch: string): string | null {
  if (slower.length === 0) return null;
  const lines = [
    `${slower.length} ${slower.length === 1 ? 'test' : 'tests'} passed slower than on ${markdownCode(baseBranch)} (than each one's median and slowest of its last passing runs there):`,
    ...slower.slice(0, REQUEST_SLOWER_RULES.listed).map((test) => {
      const rise = Math.round((test.duration_ms / Math.max(test.median_ms, 1) - 1) * 100);
      const since = test.started_run_number === null ? '' : `, since run #${test.started_run_number}`;
      return `- ${markdownText(test.title)}${test.file_path ? ` (${markdownText(test.file_path)})` : ''}: ${seconds(test.median_ms)} → ${seconds(test.duration_ms)} (+${rise}%)${since}`;
    }),
  ];
  if (slower.length > REQUEST_SLOWER_RULES.listed) lines.push(`- and ${slower.length - REQUEST_SLOWER_RULES.listed} more`);
  return lines.join('\n');
}

/** What the run's section of the comment gets added: a paragraph of its slower tests, or nothing. */
export async function slowerPart(sql: Tx, runId: number, baseBranch: string): Promise<string> {
  const rows = await durationsAgainstBranch(sql, runId, baseBranch, REQUEST_SLOWER_RULES.history, REQUEST_SLOWER_RULES.minRiseMs);
  const slower = slowerThanHistory(rows);
  if (slower.length === 0) return '';
  const branch = await durationsOnRequestBranch(
    sql,
    runId,
    slower.map((test) => test.test_case_id),
    REQUEST_SLOWER_RULES.branchRuns,
  );
  const lines = slowerLines(withStart(slower, branch), baseBranch);
  return lines ? `\n\n${lines}` : '';
}
