// packBatch: which free units an agent's batch takes, against the work the run's other agents hold.
import { describe, expect, it } from 'vitest';
import { type OtherAgent, packBatch, type PackUnit } from '../../server/src/agents/pack.ts';

const HOUR = 3_600_000;

/** Units of one project, numbered 1.. in the order given, longest first as the server lists them. */
function units(seconds: (number | null)[], project = 'chromium'): PackUnit[] {
  return seconds
    .map((s, i) => ({ unit: i + 1, runner_project: project, estimate_ms: s === null ? null : s * 1000 }))
    .sort((a, b) => (a.estimate_ms === null ? -1 : b.estimate_ms === null ? 1 : b.estimate_ms - a.estimate_ms) || a.unit - b.unit);
}

/** `agents` agents leasing one after another at the same moment (as the run's lock orders them): each one's batch. */
function leaseAtOnce(all: PackUnit[], agents: number, budgetMs = HOUR): number[][] {
  const batches: number[][] = [];
  for (let agent = 0; agent < agents; agent++) {
    const taken = new Set(batches.flat());
    const others: OtherAgent[] = Array.from({ length: agents - 1 }, (_, i) => {
      // The others in lease order: those before this one hold their batches, those after hold nothing yet.
      const other = i < agent ? batches[i] : undefined;
      return { held: (other ?? []).map((n) => all.find((u) => u.unit === n)?.estimate_ms ?? null), elapsed_ms: 0 };
    });
    batches.push(packBatch({ free: all.filter((u) => !taken.has(u.unit)), others, budget_ms: budgetMs }));
  }
  return batches;
}

const seconds = (all: PackUnit[], batch: number[]) => batch.reduce((sum, n) => sum + (all.find((u) => u.unit === n)?.estimate_ms ?? 0) / 1000, 0);

describe('packBatch', () => {
  it("when four agents lease at once on bench/agents' sleeps suite, then their batches split it into four of 60 s and leave no unit over", () => {
    const all = units([60, 45, 36, 30, 24, 15, 15, 9, 6]);
    const batches = leaseAtOnce(all, 4);
    expect(batches.map((batch) => seconds(all, batch))).toEqual([60, 60, 60, 60]);
    expect(batches[0]).toEqual([1]);
    expect(batches.flat().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('when four agents lease at once on 24 files of a real-shaped suite, then every file is in a first batch and the batches are within a short file of one another', () => {
    const all = units([16, 15, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 3]);
    const batches = leaseAtOnce(all, 4);
    expect(batches.flat().length).toBe(24);
    expect(new Set(batches.flat()).size).toBe(24);
    const sums = batches.map((batch) => seconds(all, batch));
    expect(Math.max(...sums) - Math.min(...sums)).toBeLessThanOrEqual(3);
  });

  it('when another agent is part way through its batch, then the agent takes the free work that evens out their ends', () => {
    const all = units([10, 10, 10, 10]);
    // The other holds 40 s of work and has done 30 s of it: 10 s left, so this agent takes 30 s of the 40.
    const batch = packBatch({ free: all, others: [{ held: [40_000], elapsed_ms: 30_000 }], budget_ms: HOUR });
    expect(seconds(all, batch)).toBe(30);
    // Had it just leased them, the two would split the free work.
    expect(seconds(all, packBatch({ free: all, others: [{ held: [40_000], elapsed_ms: 0 }], budget_ms: HOUR }))).toBe(40);
    expect(seconds(all, packBatch({ free: all, others: [{ held: [], elapsed_ms: 0 }], budget_ms: HOUR }))).toBe(20);
  });

  it('when the budget is less than the agent’s part, then the batch is its longest units that fit in the budget, and the first is taken whatever its size', () => {
    const all = units([4, 3, 2, 1, 1, 1]);
    expect(packBatch({ free: all, others: [], budget_ms: 6000 })).toEqual([1, 3]);
    expect(packBatch({ free: units([9, 1]), others: [], budget_ms: 5000 })).toEqual([1]);
  });

  it('when the others hold more than every free unit, then the agent still takes the longest free unit', () => {
    const all = units([5, 2, 1]);
    expect(packBatch({ free: all, others: [{ held: [60_000], elapsed_ms: 0 }], budget_ms: HOUR })).toEqual([1, 2, 3]);
    expect(packBatch({ free: all, others: [{ held: [], elapsed_ms: 0 }], budget_ms: HOUR })).toEqual([1]);
  });

  it("when free units are of two runner projects, then the batch is of the first's project and the other's stay free", () => {
    const all = [...units([4, 2]), ...units([3], 'firefox').map((u) => ({ ...u, unit: 3 }))].sort((a, b) => (b.estimate_ms ?? 0) - (a.estimate_ms ?? 0));
    expect(packBatch({ free: all, others: [], budget_ms: HOUR })).toEqual([1, 2]);
  });

  it('when a unit was never run, then it counts as the mean of the known ones (the others’ included), and it is taken first', () => {
    const all = units([null, 6, 2, 2, 2]);
    // The unknown unit counts as 3 s (the mean of 6, 2, 2, 2): 15 s in all, over two agents.
    const batch = packBatch({ free: all, others: [{ held: [], elapsed_ms: 0 }], budget_ms: HOUR });
    expect(batch[0]).toBe(1);
    expect(batch).toEqual([1, 3, 4]);
  });

  it('when no unit has an estimate, then the batch is at most the free units over twice the agents, by count', () => {
    const all = units([null, null, null, null, null, null, null, null]);
    expect(packBatch({ free: all, others: [{ held: [], elapsed_ms: 0 }], budget_ms: HOUR })).toHaveLength(3);
    expect(packBatch({ free: all.slice(0, 1), others: [{ held: [], elapsed_ms: 0 }], budget_ms: HOUR })).toHaveLength(1);
  });

  it('when no unit is free, then the batch is empty', () => {
    expect(packBatch({ free: [], others: [], budget_ms: HOUR })).toEqual([]);
  });
});
