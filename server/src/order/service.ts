import { longerFirst, NEW_TEST, type OrderReason, type OrderStrategy, rankByRisk, type TestHistory, unitHistory } from '@proctor/reporter/runs/order';
import { meanDurations } from '../analytics/index.ts';
import type { Tx } from '../db.ts';
import { failedTestsOf, knownTests, lastRunOf, type LastRun, windowRates } from './store.ts';

// Likely failures first (issue 56): what Proctor's history says of a build's tests, and the order
// it gives them (reporter/src/runs/order.ts ranks; this reads). Which tests changed is known only
// where the checkout is: the planning agent, or `proctor-ci order`, asks its Playwright.

export interface Histories {
  /** The run whose failures count as the last run's; null when the environment has none ended. */
  last_run: LastRun | null;
  /** Each test's history; a test the environment never ran is NEW_TEST. */
  of(testId: string): TestHistory;
}

/** The history of `testIds` in the environment, for a build of `branch`. */
export async function historiesOf(
  sql: Tx,
  projectId: number,
  environmentId: number,
  branch: string | null,
  testIds: string[],
  /** The tests changed since the branch's last passing run, as the checkout's Playwright said; null: not known. */
  changed: ReadonlySet<string> | null = null,
): Promise<Histories> {
  const lastRun = await lastRunOf(sql, projectId, environmentId, branch);
  const failed = lastRun ? await failedTestsOf(sql, lastRun.id) : new Set<string>();
  const rates = await windowRates(sql, projectId, environmentId, testIds);
  const means = await meanDurations(sql, projectId, environmentId, testIds);
  return {
    last_run: lastRun,
    of(testId) {
      const mean = means.get(testId);
      // A test with no duration in the environment's rollup has not run there (a rollup counts every result).
      if (mean === undefined && !failed.has(testId)) return NEW_TEST;
      const rate = rates.get(testId);
      return {
        failed_last_run: failed.has(testId),
        new: false,
        changed: changed ? changed.has(testId) : null,
        failure_rate: rate?.failure_rate ?? 0,
        flaky_score: rate?.flaky_score ?? 0,
        duration_ms: mean ?? null,
      };
    },
  };
}

/**
 * The branch a build's history is read on: its own, else (a run whose CI named none, as an agent
 * on a workspace plans it) the environment's mainline; null when the environment has no ended run.
 */
export async function historyBranch(sql: Tx, projectId: number, environmentId: number, branch: string | null): Promise<string | null> {
  return branch ?? (await lastRunOf(sql, projectId, environmentId, null))?.branch ?? null;
}

/** What a unit of a run is ranked by: its tests and its estimate. */
export interface RankedUnitInput {
  test_ids: string[];
  estimate_ms: number | null;
}

/** Each unit's place in the failures-first order (1 first), null for a unit with no sign of failing; in the order given. */
export function unitRiskRanks(units: RankedUnitInput[], histories: Histories): (number | null)[] {
  const ranked = rankByRisk(
    units.map((unit, index) => ({ unit, index })),
    ({ unit }) =>
      unitHistory(
        unit.test_ids.map((id) => histories.of(id)),
        unit.estimate_ms,
      ),
  );
  const ranks: (number | null)[] = units.map(() => null);
  for (const row of ranked) ranks[row.item.index] = row.risk_rank;
  return ranks;
}

export interface OrderedTest {
  id: string;
  title: string;
  file_path: string;
  runner_project: string;
  reasons: OrderReason[];
  risk_rank: number | null;
  failed_last_run: boolean;
  failure_rate: number;
  flaky_score: number;
  duration_ms: number | null;
}

/** Every test the environment ran, in the strategy's order for a build of `branch`, with what ranks each (its reasons, whatever the strategy). */
export async function testOrder(
  sql: Tx,
  projectId: number,
  environmentId: number,
  branch: string | null,
  strategy: OrderStrategy,
): Promise<{ last_run: LastRun | null; tests: OrderedTest[] }> {
  const known = await knownTests(sql, projectId, environmentId);
  const histories = await historiesOf(
    sql,
    projectId,
    environmentId,
    branch,
    known.map((test) => test.id),
  );
  const ranked = rankByRisk(known, (test) => histories.of(test.id)).map((row) => (strategy === 'failures-first' ? row : { ...row, risk_rank: null }));
  // `duration`: longest first (unknown first), as agents lease a duration run's units.
  if (strategy === 'duration') ranked.sort((a, b) => longerFirst(histories.of(a.item.id).duration_ms, histories.of(b.item.id).duration_ms));
  return {
    last_run: histories.last_run,
    tests: ranked.map(({ item, reasons, risk_rank }) => {
      const history = histories.of(item.id);
      return {
        ...item,
        reasons,
        risk_rank,
        failed_last_run: history.failed_last_run,
        failure_rate: history.failure_rate,
        flaky_score: history.flaky_score,
        duration_ms: history.duration_ms,
      };
    }),
  };
}
