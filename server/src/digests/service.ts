import { dailyRuns, dayWindow, testCaseMetrics } from '../analytics/index.ts';
import type { Sql } from '../db.ts';
import { listSlowerTests } from '../durations/index.ts';
import { rankedFlakyTests, WINDOW_DAYS } from '../flaky/index.ts';
import { type Digest, type DigestPeriod, PERIOD_DAYS } from './schema.ts';
import { flakierTests, openIssues, turnedBroken, turnedFlaky } from './store.ts';

const DAY_MS = 86_400_000;
const TOP = 5;
const OPEN_ISSUES = 20;
const rate = (part: number, whole: number) => Math.round((part / whole) * 1000) / 1000;
const day = (at: number) => new Date(at).toISOString().slice(0, 10);

function runsOf(rows: { run_count: number; passed_runs: number }[]) {
  const runs = rows.reduce((sum, row) => sum + row.run_count, 0);
  const passed = rows.reduce((sum, row) => sum + row.passed_runs, 0);
  return { runs, passed_runs: passed, pass_rate: runs === 0 ? null : Math.round((passed / runs) * 1000) / 1000 };
}

/**
 * A period's digest of one environment: its runs and pass rate against the period before, the
 * tests that turned flaky or broken, the flakiest, most failing and slowest, those that got slower
 * and those whose flakiness rose most against the 14 days before the period, and the project's open tracker issues (those of the tests it lists first). What a daily
 * or weekly report says; the page and MCP show the same.
 */
export async function composeDigest(sql: Sql, projectId: number, environment: { id: number; name: string }, period: DigestPeriod, now: Date): Promise<Digest> {
  const days = PERIOD_DAYS[period];
  const to = day(now.getTime());
  const fromMs = Date.parse(`${to}T00:00:00Z`) - (days - 1) * DAY_MS;
  const from = day(fromMs);
  const previous = { from: day(fromMs - days * DAY_MS), to: day(fromMs - DAY_MS) };
  const lookBackFrom = day(fromMs - WINDOW_DAYS * DAY_MS);
  const window = dayWindow({ days, start_date: from, end_date: to }, now);
  const filter = { tags: [], search: null };
  const [current, before, flaky, broken, flakiest, failing, slowest, slower, flakier] = await Promise.all([
    dailyRuns(sql, projectId, environment.id, from, to),
    dailyRuns(sql, projectId, environment.id, previous.from, previous.to),
    turnedFlaky(sql, projectId, environment.id, { from, to, lookBackFrom }),
    turnedBroken(sql, projectId, environment.id, { from, to }),
    rankedFlakyTests(sql, projectId, WINDOW_DAYS, { environmentId: environment.id, class: 'flaky', now, limit: TOP, offset: 0 }),
    testCaseMetrics(sql, projectId, environment.id, window, filter, { by: 'fail_rate', direction: 'desc', limit: TOP }),
    testCaseMetrics(sql, projectId, environment.id, window, filter, { by: 'duration', direction: 'desc', limit: TOP }),
    listSlowerTests(sql, projectId, { environmentId: environment.id, testCaseId: null, limit: 10, offset: 0 }),
    flakierTests(sql, projectId, environment.id, { from, to, lookBackFrom }, TOP),
  ]);
  const named = [...flaky, ...broken, ...flakiest.rows, ...failing.rows, ...slowest.rows, ...slower.rows, ...flakier].map((row) => row.test_case_id);
  const issues = await openIssues(sql, projectId, [...new Set(named)], OPEN_ISSUES);
  return {
    environment_id: environment.id,
    environment_name: environment.name,
    period,
    from,
    to,
    runs: { ...runsOf(current), previous: runsOf(before) },
    turned_flaky: flaky,
    turned_broken: broken,
    flakiest: flakiest.rows.map((row) => ({
      test_case_id: row.test_case_id,
      title: row.title,
      file_path: row.file_path,
      score: row.score,
      flaky_runs: row.flaky_runs,
      runs_counted: row.runs_counted,
    })),
    most_failing: failing.rows
      .filter((row) => row.fail_count > 0)
      .map((row) => ({ test_case_id: row.test_case_id, title: row.test_name, file_path: row.file_path, fail_count: row.fail_count, runs: row.total_runs })),
    // A test only skipped in the period has no duration to rank.
    slowest: slowest.rows
      .filter((row) => row.mean_duration !== null && row.total_runs > 0)
      .map((row) => ({
        test_case_id: row.test_case_id,
        title: row.test_name,
        file_path: row.file_path,
        mean_duration: row.mean_duration,
        runs: row.total_runs,
      })),
    slower: slower.rows.map((row) => ({
      test_case_id: row.test_case_id,
      title: row.title,
      file_path: row.file_path,
      baseline_ms: row.baseline_ms,
      recent_ms: row.recent_ms,
      started_run_id: row.started_run_id,
      started_run_number: row.started_run_number,
    })),
    flakier: flakier.map((row) => ({
      test_case_id: row.test_case_id,
      title: row.title,
      file_path: row.file_path,
      flaky_rate: rate(row.flaky_runs, row.runs_counted),
      flaky_runs: row.flaky_runs,
      runs_counted: row.runs_counted,
      previous_flaky_rate: row.previous_runs_counted === 0 ? null : rate(row.previous_flaky_runs, row.previous_runs_counted),
      previous_runs_counted: row.previous_runs_counted,
    })),
    open_issues: issues.rows,
    open_issues_total: issues.total,
  };
}
