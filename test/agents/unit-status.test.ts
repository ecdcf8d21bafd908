// unitStatus: a unit of a batch ends with its own tests' status, not its batch-mates'.
import { describe, expect, it } from 'vitest';
import { unitStatus } from '../../reporter/src/reporter/unit-batch.ts';

describe('unitStatus', () => {
  it("when a batch's Playwright failed and the unit's every test ended, then the unit ends by its own tests", () => {
    expect(unitStatus('failed', { failed: false, complete: true }, 0)).toBe('passed');
    expect(unitStatus('failed', { failed: true, complete: true }, 0)).toBe('failed');
  });

  it("when a batch's Playwright timed out or was interrupted, then a unit whose tests all ended takes its own status and one with a test that never ended takes Playwright's", () => {
    expect(unitStatus('timedout', { failed: false, complete: true }, 0)).toBe('passed');
    expect(unitStatus('interrupted', { failed: true, complete: true }, 0)).toBe('failed');
    expect(unitStatus('timedout', { failed: false, complete: false }, 0)).toBe('timedout');
    expect(unitStatus('interrupted', { failed: false, complete: false }, 0)).toBe('interrupted');
  });

  it('when Playwright reported an error of no test, then every unit takes its status', () => {
    expect(unitStatus('failed', { failed: false, complete: true }, 1)).toBe('failed');
  });

  it("when the batch's Playwright passed, then every unit passed", () => {
    expect(unitStatus('passed', { failed: false, complete: true }, 0)).toBe('passed');
  });
});
