import type { BadgeSpec } from '@proctor/badge/spec';
import type { BadgeQuery } from './schema.ts';
import type { BadgeState } from './store.ts';

const STATUS: Record<string, { message: string; color: string }> = {
  passed: { message: 'passing', color: 'brightgreen' },
  failed: { message: 'failing', color: 'red' },
  error: { message: 'error', color: 'orange' },
  cancelled: { message: 'cancelled', color: 'lightgrey' },
};

function message(state: BadgeState, metric: BadgeQuery['metric']): { message: string; color: string } {
  if (metric === 'pass-rate') {
    if (state.week.finished === 0) return { message: 'no runs', color: 'lightgrey' };
    const rate = Math.round((state.week.passed / state.week.finished) * 100);
    return { message: `${rate}%`, color: rate >= 95 ? 'brightgreen' : rate >= 80 ? 'yellowgreen' : rate >= 60 ? 'yellow' : 'red' };
  }
  if (!state.latest) return { message: 'no runs', color: 'lightgrey' };
  const status = STATUS[state.latest.state] ?? { message: state.latest.state, color: 'lightgrey' };
  if (metric === 'status') return status;
  const { success_count, flaky_count, failed_count, skipped_count } = state.latest;
  const parts = [`${success_count + flaky_count} passed`, `${failed_count} failed`];
  if (skipped_count > 0) parts.push(`${skipped_count} skipped`);
  return { message: parts.join(', '), color: status.color };
}

/** What the badge says for an environment's state and the query's options. */
export function badgeSpec(state: BadgeState | null, query: BadgeQuery): { spec: BadgeSpec; found: boolean } {
  if (!state) {
    return { found: false, spec: { label: query.label ?? 'tests', message: 'not found', color: 'lightgrey', style: query.style } };
  }
  const shown = message(state, query.metric);
  return {
    found: true,
    spec: {
      label: query.label ?? state.environmentName,
      message: shown.message,
      color: query.color ?? shown.color,
      ...(query.labelColor ? { labelColor: query.labelColor } : {}),
      style: query.style,
    },
  };
}
