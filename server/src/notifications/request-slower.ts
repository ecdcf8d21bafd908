import { markdownCode, markdownText } from '@proctor/reporter/markdown';
import type { Tx } from '../db.ts';
import { SHIFT_RULES } from '../durations/index.ts';
import { type DurationAgainstBase, durationsAgainstBranch } from './slower-store.ts';

// The tests a pull (merge) request's run passed slower than they pass on the branch it merges
// into: a part of the request's comment of its own, after the run's section. One run is all a
// request may have, so the run's duration is held against the test's history there, not against
// one earlier run: it must be above the slowest of its last passing runs there (at least 10 of
// them), and above their median by the duration shifts' share and milliseconds (20%, 50 ms): a
// test whose duration swings as much on the base branch is not news.

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
} as const;

export interface SlowerInRun {
  test_case_id: string;
  title: string;
  file_path: string;
  duration_ms: number;
  median_ms: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Which of the run's tests passed slower than their history says they do, the largest rise first. */
export function slowerThanHistory(rows: DurationAgainstBase[]): SlowerInRun[] {
  const slower: SlowerInRun[] = [];
  for (const row of rows) {
    if (row.history_ms.length < REQUEST_SLOWER_RULES.minHistory) continue;
    const typical = median(row.history_ms);
    if (row.duration_ms <= Math.max(...row.history_ms)) continue;
    if (row.duration_ms < typical * (1 + REQUEST_SLOWER_RULES.minRise) || row.duration_ms - typical < REQUEST_SLOWER_RULES.minRiseMs) continue;
    slower.push({ test_case_id: row.test_case_id, title: row.title, file_path: row.file_path, duration_ms: row.duration_ms, median_ms: typical });
  }
  return slower.sort(
    (a, b) => b.duration_ms / Math.max(b.median_ms, 1) - a.duration_ms / Math.max(a.median_ms, 1) || a.test_case_id.localeCompare(b.test_case_id),
  );
}

const seconds = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`);

/** The comment's lines of them; null when there is none. */
export function slowerLines(slower: SlowerInRun[], baseBranch: string): string | null {
  if (slower.length === 0) return null;
  const lines = [
    `${slower.length} ${slower.length === 1 ? 'test' : 'tests'} passed slower than on ${markdownCode(baseBranch)} (than each one's median and slowest of its last passing runs there):`,
    ...slower.slice(0, REQUEST_SLOWER_RULES.listed).map((test) => {
      const rise = Math.round((test.duration_ms / Math.max(test.median_ms, 1) - 1) * 100);
      return `- ${markdownText(test.title)}${test.file_path ? ` (${markdownText(test.file_path)})` : ''}: ${seconds(test.median_ms)} → ${seconds(test.duration_ms)} (+${rise}%)`;
    }),
  ];
  if (slower.length > REQUEST_SLOWER_RULES.listed) lines.push(`- and ${slower.length - REQUEST_SLOWER_RULES.listed} more`);
  return lines.join('\n');
}

/** What the run's section of the comment gets added: a paragraph of its slower tests, or nothing. */
export async function slowerPart(sql: Tx, runId: number, baseBranch: string): Promise<string> {
  const rows = await durationsAgainstBranch(sql, runId, baseBranch, REQUEST_SLOWER_RULES.history, REQUEST_SLOWER_RULES.minRiseMs);
  const lines = slowerLines(slowerThanHistory(rows), baseBranch);
  return lines ? `\n\n${lines}` : '';
}
