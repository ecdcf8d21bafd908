import type { Sql } from '../db.ts';
import { ensureWindow } from './rollup-store.ts';
import * as store from './store.ts';
import type { FlakinessRow, WindowFilter } from './store.ts';
import { WINDOW_DAYS, windowStart } from './window.ts';

/**
 * The tests of a window ranked by score: the kept window (brought up to today first) when it is the
 * window asked for, else summed from the daily rows. The API's list and the flaky tests page read
 * the same ranking.
 */
export async function rankedFlakyTests(sql: Sql, projectId: number, days: number, filter: WindowFilter): Promise<{ rows: FlakinessRow[]; total: number }> {
  const since = windowStart(filter.now, days);
  if (days !== WINDOW_DAYS) return store.summedWindow(sql, projectId, since, filter);
  return sql.begin(async (tx) => {
    await ensureWindow(tx, projectId, since);
    return store.keptWindow(tx, projectId, filter);
  });
}
