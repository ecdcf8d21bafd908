import type { SlowerTest } from './schema.ts';
import type { SlowerTestRow } from './store.ts';

export function slowerTestView(row: SlowerTestRow): SlowerTest {
  return {
    ...row,
    rise: Math.round(((row.recent_ms - row.baseline_ms) / Math.max(row.baseline_ms, 1)) * 1000) / 1000,
    detected_at: row.detected_at.toISOString(),
  };
}
