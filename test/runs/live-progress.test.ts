import { describe, expect, it } from 'vitest';
import { advance, formatPosition, parsePosition, presentProgress } from '../../server/src/runs/live.ts';
import type { RunProgress } from '../../server/src/runs/live-store.ts';

// A live run's time left and its stream positions, as plain functions.
const running: RunProgress = {
  state: 'running',
  total: 10,
  done: 4,
  passed: 3,
  failed: 1,
  flaky: 0,
  skipped: 0,
  snoozed: 0,
  elapsed_ms: 2000,
  done_ms: 8000,
  left_test_ms: 12_000,
};

describe('the time left of a run under way', () => {
  it('when 4 tests took 8 s in 2 s of wall time and the 6 left took 12 s before, then about 3 s are left (four side by side)', () => {
    expect(presentProgress(running).time_left_ms).toBe(3000);
  });

  it('when nothing is done yet, or no duration says, then the time left is unknown; once the run ended it is none', () => {
    expect(presentProgress({ ...running, done: 0, done_ms: 0 }).time_left_ms).toBeNull();
    expect(presentProgress({ ...running, left_test_ms: null }).time_left_ms).toBeNull();
    expect(presentProgress({ ...running, state: 'failed' }).time_left_ms).toBe(0);
  });
});

describe('stream positions', () => {
  it('when a position is written and read back, then it is the same; anything else is no position', () => {
    const position = { horizon: '1200', seen: ['1201', '1205'] };
    expect(parsePosition(formatPosition(position))).toEqual(position);
    for (const bad of ['', 'x', '1..2', '-1', '1.', `${'1'.repeat(21)}`]) expect(parsePosition(bad)).toBeNull();
  });

  it('when a read moves the horizon past transactions seen, then they are forgotten; those above it are kept, in order', () => {
    const after = advance({ horizon: '100', seen: ['105', '103'] }, '104', [{ xid: '110' } as never, { xid: '102' } as never]);
    expect(after).toEqual({ horizon: '104', seen: ['105', '110'] });
    // A horizon never goes back.
    expect(advance({ horizon: '200', seen: [] }, '150', []).horizon).toBe('200');
  });
});
