import { describe, expect, it } from 'vitest';
import { laneTimeline, type TimelineAttempt } from '../../server/src/runs/timeline.ts';

const BASE = Date.parse('2026-05-10T12:00:00Z');

/** An attempt of `id` that started `at` ms after the base and lasted `ms`. */
function ran(id: string, at: number, ms: number, where: Partial<TimelineAttempt> = {}): TimelineAttempt {
  return {
    test_case_id: id,
    title: id,
    shard: 1,
    agent_id: null,
    agent: null,
    parallel_index: null,
    retry: 0,
    status: 'passed',
    started_at: new Date(BASE + at),
    duration: ms,
    ...where,
  };
}

const lanes = (attempts: TimelineAttempt[]) =>
  laneTimeline(attempts)?.lanes.map((lane) => ({
    name: `${lane.place}/${lane.packed ? 'lane' : 'worker'} ${lane.worker}`,
    tests: lane.attempts.map((a) => a.test_case_id),
  }));

describe("a run's timeline", () => {
  it('when attempts carry their worker slot, then each shard and slot is a lane of its attempts in the order they started', () => {
    expect(
      lanes([
        ran('a', 0, 100, { parallel_index: 1 }),
        ran('b', 0, 50, { parallel_index: 0 }),
        ran('c', 60, 10, { parallel_index: 0 }),
        ran('d', 5, 10, { shard: 2, parallel_index: 0 }),
      ]),
    ).toEqual([
      { name: 'shard 1/worker 0', tests: ['b', 'c'] },
      { name: 'shard 1/worker 1', tests: ['a'] },
      { name: 'shard 2/worker 0', tests: ['d'] },
    ]);
  });

  it('when attempts carry no worker slot, then they are packed into the first lane free at their start', () => {
    // a and b overlap (two lanes); c starts after a ended and takes its lane.
    expect(lanes([ran('a', 0, 100), ran('b', 50, 200), ran('c', 100, 20)])).toEqual([
      { name: 'shard 1/lane 0', tests: ['a', 'c'] },
      { name: 'shard 1/lane 1', tests: ['b'] },
    ]);
  });

  it("when a run's units ran on agents, then the lanes are the agents' workers, whatever unit (shard) each test was", () => {
    const timeline = laneTimeline([
      ran('a', 0, 100, { shard: 1, agent_id: 7, agent: 'ci-2', parallel_index: 0 }),
      ran('b', 200, 100, { shard: 3, agent_id: 7, agent: 'ci-2', parallel_index: 0 }),
      ran('c', 0, 900, { shard: 2, agent_id: 5, agent: 'ci-1', parallel_index: 0 }),
    ]);
    expect(timeline?.lanes.map((lane) => [lane.place, lane.attempts.map((a) => a.test_case_id), lane.busy, lane.end])).toEqual([
      ['agent ci-1', ['c'], 900, 900],
      ['agent ci-2', ['a', 'b'], 200, 300],
    ]);
    expect(timeline?.span).toBe(900);
  });

  it('when no attempt has a start time, then there is no timeline', () => {
    expect(laneTimeline([])).toBeNull();
  });
});
