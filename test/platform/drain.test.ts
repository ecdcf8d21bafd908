import { describe, expect, it } from 'vitest';
import { DrainLoop } from '../../server/src/executor/drain.ts';

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('the drain loop of the jobs', () => {
  it('when woken, then it takes items until the queue is empty, and a wake during a drain drains again after it', async () => {
    let queued = 3;
    let steps = 0;
    const loop = new DrainLoop(
      async () => {
        steps++;
        if (queued === 0) return false;
        queued--;
        return true;
      },
      60_000,
      () => undefined,
    );
    loop.wake();
    queued += 2;
    loop.wake();
    await settle();
    await loop.stop();
    expect(queued).toBe(0);
    // Five items, and one empty look at the end of each of the two drains.
    expect(steps).toBe(7);
  });

  it('when its step keeps failing (the database is down), then the failure is reported once until a drain succeeds, then again', async () => {
    let down = true;
    const reported: unknown[] = [];
    const loop = new DrainLoop(
      async () => {
        if (down) throw new Error('database unavailable');
        return false;
      },
      60_000,
      (error) => reported.push(error),
    );
    for (let i = 0; i < 5; i++) {
      loop.wake();
      await settle();
    }
    expect(reported).toHaveLength(1);
    down = false;
    loop.wake();
    await settle();
    down = true;
    loop.wake();
    await settle();
    await loop.stop();
    expect(reported).toHaveLength(2);
  });
});
