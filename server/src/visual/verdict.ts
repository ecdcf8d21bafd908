import type { Tx } from '../db.ts';
import type { ChangeRow } from './store.ts';
import { type NoiseSetting, noiseSetting, passedRetries, type Recent, recentDiffs, screenshotKey } from './verdict-store.ts';

// Flaky screenshots told apart from real changes (issue 57, point 5; docs/decisions/visual-flaky-noise.md).
// Worked out when read, never stored: a retry's result or a later comparison may arrive after the
// change was found, and the answer follows them without a job to keep a stored verdict in step.
//
// - flaky: a later attempt of the test in the same run passed, so its screenshot matched the
//   baseline there (Playwright passes an attempt only when every screenshot is within threshold).
// - noise: the project set a noise ratio; this diff's share of changed pixels is at most that, and
//   in the environment's recent runs holding the test (this one included) the same screenshot had
//   at least one other such small diff and none larger, not all in the same place. A real change
//   repeats where it is; anti-aliasing and font jitter move about.

export type Verdict = { kind: 'change'; reason: null } | { kind: 'flaky' | 'noise'; reason: string };

const CHANGE: Verdict = { kind: 'change', reason: null };

const percent = (ratio: number) => `${(ratio * 100).toFixed(3).replace(/\.?0+$/, '')}%`;

/** Whether the change is small enough to be noise, before its recent diffs are read. */
function mayBeNoise(row: ChangeRow, setting: NoiseSetting): boolean {
  return setting.ratio !== null && row.changed_ratio !== null && row.size_changed === false && row.changed_ratio <= setting.ratio;
}

function noiseOf(row: ChangeRow, setting: NoiseSetting, recent: Recent[]): Verdict {
  const limit = setting.ratio;
  if (limit === null || row.changed_ratio === null || !mayBeNoise(row, setting)) return CHANGE;
  const small = recent.filter((r) => r.changed_ratio !== null && r.size_changed === false && r.changed_ratio <= limit);
  if (small.length < 2 || small.length < recent.length) return CHANGE;
  const places = new Set(small.map((r) => JSON.stringify(r.boxes ?? [])));
  if (places.size < 2) return CHANGE;
  return {
    kind: 'noise',
    reason: `${percent(row.changed_ratio)} of pixels changed, at most the project's noise ratio ${percent(limit)}, and ${small.length} of the last ${setting.runs} runs had small diffs of this screenshot in different places`,
  };
}

/** Each change's verdict, by its id. */
export async function verdictsOf(sql: Tx, projectId: number, runId: number, rows: ChangeRow[]): Promise<Map<number, Verdict>> {
  const verdicts = new Map<number, Verdict>();
  if (rows.length === 0) return verdicts;
  const [passed, setting] = await Promise.all([passedRetries(sql, runId, [...new Set(rows.map((r) => r.test_case_id))]), noiseSetting(sql, projectId)]);
  const laterPass = (row: ChangeRow) => (passed.get(row.test_case_id) ?? []).filter((retry) => retry > row.retry).sort((a, b) => a - b)[0];
  // The recent diffs of every screenshot that may be noise, read together.
  const candidates = rows.filter((row) => laterPass(row) === undefined && mayBeNoise(row, setting));
  const recent = await recentDiffs(sql, runId, candidates, setting.runs);
  for (const row of rows) {
    const later = laterPass(row);
    if (later !== undefined) {
      verdicts.set(row.id, {
        kind: 'flaky',
        reason: `did not reproduce: the test passed on retry ${later}, its screenshot within threshold of the baseline`,
      });
      continue;
    }
    verdicts.set(row.id, noiseOf(row, setting, recent.get(screenshotKey(row)) ?? []));
  }
  return verdicts;
}

/** The rows with their verdicts. */
export async function withVerdicts<Row extends ChangeRow>(sql: Tx, projectId: number, runId: number, rows: Row[]): Promise<(Row & { verdict: Verdict })[]> {
  const verdicts = await verdictsOf(sql, projectId, runId, rows);
  return rows.map((row) => ({ ...row, verdict: verdicts.get(row.id) ?? CHANGE }));
}
