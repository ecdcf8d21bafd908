import type { Tx } from '../db.ts';
import { findDurationShift } from './shift.ts';
import { candidateTests, type DurationRow, type FoundShift, passedDurations, runPlace, saveShifts } from './store.ts';

/**
 * Once a run is rolled up: which of its tests got slower in its environment, and which flagged
 * before no longer are. In the rollup's transaction, so a run is looked at once.
 */
export async function recordDurationShifts(sql: Tx, runId: number, now: Date): Promise<void> {
  const place = await runPlace(sql, runId);
  if (!place) return;
  const tests = await candidateTests(sql, runId, place);
  if (tests.length === 0) return;
  const byTest = new Map<string, DurationRow[]>();
  for (const row of await passedDurations(sql, runId, place, tests)) {
    const rows = byTest.get(row.test_case_id);
    if (rows) rows.push(row);
    else byTest.set(row.test_case_id, [row]);
  }
  const found: FoundShift[] = [];
  for (const [testCaseId, rows] of byTest) {
    const shift = findDurationShift(rows.map((row) => ({ runId: row.run_id, runNumber: row.run_number, duration: row.duration })));
    if (shift) found.push({ ...shift, testCaseId });
  }
  await saveShifts(sql, place, tests, found, now);
}
