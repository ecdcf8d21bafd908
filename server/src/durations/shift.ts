// When a test got slower: a change point in its passed durations, held against noise by a rank
// test. One slow run (a busy machine, a cold cache) moves one rank; a test that really got slower
// puts every later run above most earlier ones. For each split of the series into an earlier
// look-back and a later part, the Mann–Whitney U of "later is slower" is turned into a z-score from
// the joint ranks (ties share their mean rank, and the variance is corrected for them); the split
// with the highest z is where the slowdown started. It is reported only when that z is beyond what
// one of the many splits reaches by chance, the later part's median rose by a real share and a real
// number of milliseconds, and the latest runs are still slow (a test that came back is not flagged).

export interface DurationPoint {
  runId: number;
  runNumber: number;
  /** The passed attempt's duration, milliseconds. */
  duration: number;
}

export interface DurationShift {
  /** The first run of the slower part. */
  startedRunId: number;
  startedRunNumber: number;
  /** Medians of the look-back part and of the slower part, milliseconds. */
  baselineMs: number;
  recentMs: number;
  /** The rank test's z-score at the split. */
  z: number;
  /** Runs in the series. */
  runs: number;
}

export const SHIFT_RULES = {
  /** Runs the look-back part needs at least. */
  minBefore: 10,
  /** Runs the slower part needs at least: one or two slow runs are noise, not a change. */
  minAfter: 5,
  /**
   * The z the best split must reach. Taking the best of up to ~45 splits inflates z; 3.5 (one-sided
   * p ≈ 0.0002 for one split) keeps a flat series with outliers unflagged (test/durations).
   */
  minZ: 3.5,
  /** The median must rise by this share… */
  minRise: 0.2,
  /** …and by at least this many milliseconds (a 10 ms test that takes 13 ms is not news). */
  minRiseMs: 50,
  /** The series' longest: the look-back and the slower part together, newest runs. */
  maxRuns: 60,
} as const;

/** Mean ranks (1-based) of the values, ties sharing their mean; and the tie correction term Σ(t³ − t). */
function ranksOf(values: number[]): { ranks: number[]; ties: number } {
  const order = values.map((value, index) => ({ value, index })).sort((a, b) => a.value - b.value);
  const ranks = new Array<number>(values.length);
  let ties = 0;
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.value === order[start]!.value) end++;
    const rank = (start + end + 2) / 2;
    for (let i = start; i <= end; i++) ranks[order[i]!.index] = rank;
    const t = end - start + 1;
    ties += t * t * t - t;
    start = end + 1;
  }
  return { ranks, ties };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function risesEnough(before: number, after: number): boolean {
  return after >= before * (1 + SHIFT_RULES.minRise) && after - before >= SHIFT_RULES.minRiseMs;
}

/**
 * The slowdown in a test's passed durations, oldest first, or null when there is none the rules
 * can stand behind. Only the newest `maxRuns` points count.
 */
export function findDurationShift(series: DurationPoint[]): DurationShift | null {
  const points = series.slice(-SHIFT_RULES.maxRuns);
  const n = points.length;
  if (n < SHIFT_RULES.minBefore + SHIFT_RULES.minAfter) return null;
  const durations = points.map((point) => point.duration);
  const { ranks, ties } = ranksOf(durations);
  const tieTerm = ties / (n * (n - 1));

  // Rank sums of every suffix: the later part's W, hence its U, for each split in O(1).
  const suffixRanks = new Array<number>(n + 1).fill(0);
  for (let i = n - 1; i >= 0; i--) suffixRanks[i] = suffixRanks[i + 1]! + ranks[i]!;

  let best: { split: number; z: number } | null = null;
  for (let split = SHIFT_RULES.minBefore; split <= n - SHIFT_RULES.minAfter; split++) {
    const after = n - split;
    const before = split;
    const u = suffixRanks[split]! - (after * (after + 1)) / 2;
    const variance = ((before * after) / 12) * (n + 1 - tieTerm);
    if (variance <= 0) continue;
    const z = (u - (before * after) / 2) / Math.sqrt(variance);
    if (best === null || z > best.z) best = { split, z };
  }
  if (best === null || best.z < SHIFT_RULES.minZ) return null;

  // The best split may take in a last run of the old level that happened to be slow for it (the
  // rank test gains little from leaving it out): the slowdown starts at the first run nearer the
  // slower level than the old one.
  let split = best.split;
  const midpoint = (median(durations.slice(0, split)) + median(durations.slice(split))) / 2;
  while (split < n - SHIFT_RULES.minAfter && durations[split]! < midpoint) split++;
  const baselineMs = median(durations.slice(0, split));
  const recentMs = median(durations.slice(split));
  const latestMs = median(durations.slice(-SHIFT_RULES.minAfter));
  if (!risesEnough(baselineMs, recentMs) || !risesEnough(baselineMs, latestMs)) return null;

  const start = points[split]!;
  return {
    startedRunId: start.runId,
    startedRunNumber: start.runNumber,
    baselineMs: Math.round(baselineMs),
    recentMs: Math.round(recentMs),
    z: Math.round(best.z * 100) / 100,
    runs: n,
  };
}
