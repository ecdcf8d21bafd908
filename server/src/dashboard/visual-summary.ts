// A run's visual changes in a line: shared by the pages (server) and the review page's script.

/** The counts the line is made of (the visual changes' `counts`). */
export interface VisualCounts {
  total: number;
  pending: number;
  approved: number;
  rejected: number;
  flaky: number;
  noise: number;
}

/**
 * "3 visual changes to review", or what was decided when none waits, flaky and noise ones counted
 * apart; null when there is none. The review page's script says it again after a review, with this same function.
 */
export function visualSummary(counts: VisualCounts): string | null {
  if (counts.total === 0) return null;
  const plural = (n: number) => `${n} visual change${n === 1 ? '' : 's'}`;
  const real = counts.total - counts.flaky - counts.noise;
  const apart = [counts.flaky > 0 ? `${counts.flaky} flaky` : '', counts.noise > 0 ? `${counts.noise} noise` : ''].filter(Boolean).join(', ');
  const decided =
    real === 0
      ? 'No real visual change'
      : counts.pending > 0
        ? `${plural(counts.pending)} to review`
        : counts.rejected > 0
          ? `${plural(real)}: ${counts.rejected} rejected, ${counts.approved} approved`
          : `${plural(real)}, all approved`;
  return apart ? `${decided} · ${apart}, not offered as baselines` : decided;
}
