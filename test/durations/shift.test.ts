import { describe, expect, it } from 'vitest';
import { type DurationPoint, findDurationShift } from '../../server/src/durations/shift.ts';
import { seeded } from '../helpers/seeded.ts';

/** Durations around `base` with ±`jitter` share of uniform noise, numbered from run `from`. */
function series(durations: number[], from = 1): DurationPoint[] {
  return durations.map((duration, i) => ({ runId: 1000 + from + i, runNumber: from + i, duration: Math.round(duration) }));
}

function noisy(random: () => number, count: number, base: number, jitter = 0.08): number[] {
  return Array.from({ length: count }, () => base * (1 + (random() * 2 - 1) * jitter));
}

describe('finding when a test got slower', () => {
  it('when a test is 30% slower for its last 20 runs, then the slowdown is found where it started', () => {
    const random = seeded(7);
    const points = series([...noisy(random, 40, 1200), ...noisy(random, 20, 1560)]);
    const shift = findDurationShift(points);
    expect(shift).not.toBeNull();
    expect(shift!.startedRunNumber).toBe(41);
    expect(shift!.baselineMs).toBeGreaterThan(1100);
    expect(shift!.baselineMs).toBeLessThan(1300);
    expect(shift!.recentMs / shift!.baselineMs).toBeGreaterThan(1.2);
  });

  it('when single runs are 30% slower now and then, then no slowdown is flagged', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      const random = seeded(seed);
      // One run in six is slow, anywhere in the series: the same size of change, not held.
      const durations = noisy(random, 60, 1200).map((d) => (random() < 1 / 6 ? d * 1.3 : d));
      expect(findDurationShift(series(durations)), `seed ${seed}`).toBeNull();
    }
  });

  it('when the last two runs are slow, then it is too early to say', () => {
    const random = seeded(3);
    const points = series([...noisy(random, 40, 1200), ...noisy(random, 2, 1800)]);
    expect(findDurationShift(points)).toBeNull();
  });

  it('when a test got slower and then came back, then it is not flagged', () => {
    const random = seeded(4);
    const points = series([...noisy(random, 25, 1200), ...noisy(random, 15, 1600), ...noisy(random, 10, 1200)]);
    expect(findDurationShift(points)).toBeNull();
  });

  it('when a tiny test rises by a few milliseconds, then it is not news', () => {
    const random = seeded(5);
    const points = series([...noisy(random, 40, 20), ...noisy(random, 20, 30)]);
    expect(findDurationShift(points)).toBeNull();
  });

  it('when a test got faster, then nothing is flagged', () => {
    const random = seeded(6);
    expect(findDurationShift(series([...noisy(random, 40, 1500), ...noisy(random, 20, 1000)]))).toBeNull();
  });

  it('when durations are all equal, then ties do not divide by zero', () => {
    expect(findDurationShift(series(Array.from({ length: 30 }, () => 500)))).toBeNull();
  });

  it('when fewer runs than the look-back and slower part need, then nothing is said', () => {
    const random = seeded(8);
    expect(findDurationShift(series([...noisy(random, 6, 1000), ...noisy(random, 6, 2000)]))).toBeNull();
  });

  it('when the series is longer than the look-back window, then only its newest runs count', () => {
    const random = seeded(9);
    // An old slowdown, 80 runs ago, has become the normal duration: nothing to flag now.
    const points = series([...noisy(random, 30, 800), ...noisy(random, 80, 1200)]);
    expect(findDurationShift(points)).toBeNull();
  });
});
