// Likely failures first (issue 56): the pure ranking of a build's tests by their chance to fail,
// and the agents' batches it shapes.
import { describe, expect, it } from 'vitest';
import { NEW_TEST, rankByRisk, type TestHistory, unitHistory } from '../../reporter/src/runs/order.ts';
import { packBatch, playwrightFileOrder } from '../../server/src/agents/pack.ts';

const known = (fields: Partial<TestHistory> = {}): TestHistory => ({
  failed_last_run: false,
  new: false,
  changed: false,
  failure_rate: 0,
  flaky_score: 0,
  duration_ms: 1000,
  ...fields,
});

const order = (tests: Record<string, TestHistory>) =>
  rankByRisk(Object.keys(tests), (name) => tests[name] as TestHistory).map((row) => [row.item, row.risk_rank, row.reasons.join(',')]);

describe('the failures-first ranking', () => {
  it('when a short test failed in the last run, then it goes before every longer test that passed', () => {
    expect(
      order({ long: known({ duration_ms: 60_000 }), failed: known({ failed_last_run: true, duration_ms: 50 }), mid: known({ duration_ms: 5000 }) }),
    ).toEqual([
      ['failed', 1, 'failed_last_run'],
      ['long', null, ''],
      ['mid', null, ''],
    ]);
  });

  it('when a test was never run, then it goes first as new, after the last run failures', () => {
    expect(order({ long: known({ duration_ms: 60_000 }), fresh: NEW_TEST, failed: known({ failed_last_run: true }) })).toEqual([
      ['failed', 1, 'failed_last_run'],
      ['fresh', 2, 'new'],
      ['long', null, ''],
    ]);
  });

  it("when a test's file changed since the last passing run, then it goes first, after new tests and before the window's rates", () => {
    expect(
      order({
        long: known({ duration_ms: 60_000 }),
        often: known({ failure_rate: 0.9 }),
        changed: known({ changed: true, duration_ms: 10 }),
        fresh: NEW_TEST,
      }),
    ).toEqual([
      ['fresh', 1, 'new'],
      ['changed', 2, 'changed'],
      ['often', 3, 'failure_rate'],
      ['long', null, ''],
    ]);
  });

  it("when tests only differ by the window's failure rate and flaky score, then the higher sum goes first, and equal ones longest first", () => {
    expect(
      order({
        flaky: known({ flaky_score: 0.1, duration_ms: 100 }),
        failing: known({ failure_rate: 0.3, duration_ms: 100 }),
        both: known({ failure_rate: 0.1, flaky_score: 0.1, duration_ms: 100 }),
        bothLonger: known({ failure_rate: 0.1, flaky_score: 0.1, duration_ms: 900 }),
      }),
    ).toEqual([
      ['failing', 1, 'failure_rate'],
      ['bothLonger', 2, 'failure_rate,flaky'],
      ['both', 3, 'failure_rate,flaky'],
      ['flaky', 4, 'flaky'],
    ]);
  });

  it('when no test has a sign of failing, then the order is the duration order: unknown first, then longest', () => {
    expect(order({ short: known({ duration_ms: 10 }), unknown: known({ duration_ms: null }), long: known({ duration_ms: 99 }) })).toEqual([
      ['unknown', null, ''],
      ['long', null, ''],
      ['short', null, ''],
    ]);
  });

  it("when a unit's tests are put together, then it failed or is new when one of them is, with its riskiest rates and its own estimate", () => {
    expect(unitHistory([known(), known({ failed_last_run: true, failure_rate: 0.2 }), known({ flaky_score: 0.5 })], 1234)).toEqual({
      failed_last_run: true,
      new: false,
      changed: false,
      failure_rate: 0.2,
      flaky_score: 0.5,
      duration_ms: 1234,
    });
    expect(unitHistory([known(), NEW_TEST], null)).toMatchObject({ new: true, changed: null });
  });
});

describe("an agent's batch in a failures-first run", () => {
  it('when a short unit is ranked first, then the batch starts with it and holds ranked units alone, whatever the budget', () => {
    const free = [
      { unit: 4, runner_project: 'p', estimate_ms: 100, risk_rank: 1 },
      { unit: 2, runner_project: 'p', estimate_ms: 200, risk_rank: 2 },
      { unit: 1, runner_project: 'p', estimate_ms: 5000, risk_rank: null },
      { unit: 3, runner_project: 'p', estimate_ms: 4000, risk_rank: null },
    ];
    // One agent with room for everything: one Playwright runs a batch in file order, so the long
    // unranked units wait for the next batch rather than run before a likely failure.
    expect(packBatch({ free, others: [], budget_ms: 60_000 })).toEqual([4, 2]);
    // Two agents: the ranked units are shared out first, the second to the other agent (the least
    // loaded), so that both start on a likely failure.
    expect(packBatch({ free, others: [{ held: [], elapsed_ms: 0 }], budget_ms: 60_000 })).toEqual([4]);
    // Once the ranked units are taken, the rest go as before: longest first, packed.
    expect(packBatch({ free: free.slice(2), others: [], budget_ms: 60_000 })).toEqual([1, 3]);
  });

  it("when unranked units' files come after the ranked ones' in Playwright's file order, then they join the ranked batch (one Playwright start); those before wait for the next", () => {
    const free = [
      { unit: 4, runner_project: 'p', estimate_ms: 100, risk_rank: 1, file: 'checkout/pay.spec.ts' },
      { unit: 2, runner_project: 'p', estimate_ms: 200, risk_rank: 2, file: 'cart.spec.ts' },
      { unit: 1, runner_project: 'p', estimate_ms: 5000, risk_rank: null, file: 'account.spec.ts' },
      { unit: 3, runner_project: 'p', estimate_ms: 4000, risk_rank: null, file: 'checkout/ship.spec.ts' },
      { unit: 5, runner_project: 'p', estimate_ms: 3000, risk_rank: null, file: 'search.spec.ts' },
      // A fully parallel file's other test, unranked: Playwright may run it before its ranked neighbour.
      { unit: 6, runner_project: 'p', estimate_ms: 1000, risk_rank: null, file: 'checkout/pay.spec.ts' },
    ];
    // cart < checkout/pay < checkout/ship < search; account comes first, and pay's own other test may.
    expect(packBatch({ free, others: [], budget_ms: 60_000 })).toEqual([4, 2, 3, 5]);
    // Without files known (an older plan), ranked units stay alone as before.
    const unknown = free.map(({ file: _file, ...unit }) => unit);
    expect(packBatch({ free: unknown, others: [], budget_ms: 60_000 })).toEqual([4, 2]);
  });

  it("when Playwright's file order is asked, then it walks folders depth first, each by name", () => {
    const files = ['b.spec.ts', 'a/z.spec.ts', 'a.spec.ts', 'a/b/c.spec.ts', 'B2.spec.ts'];
    expect([...files].sort(playwrightFileOrder)).toEqual(['a/b/c.spec.ts', 'a/z.spec.ts', 'a.spec.ts', 'b.spec.ts', 'B2.spec.ts']);
    expect(playwrightFileOrder('x.spec.ts', 'x.spec.ts')).toBe(0);
  });

  it('when no unit is ranked, then the batch is the duration order as before', () => {
    const free = [
      { unit: 1, runner_project: 'p', estimate_ms: 5000 },
      { unit: 2, runner_project: 'p', estimate_ms: 200 },
      { unit: 3, runner_project: 'p', estimate_ms: 4000 },
    ];
    expect(packBatch({ free, others: [], budget_ms: 9000 })).toEqual([1, 3]);
  });
});
