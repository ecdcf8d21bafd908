import type { AppDeps } from '../context.ts';
import { getEnvironment } from '../environments/index.ts';
import { HttpError } from '../http/errors.ts';
import { escapeLike } from '../db.ts';
import { parseTagList } from '../testcases/index.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { runAnalyticsResponse, testCaseAnalyticsQuery, testCaseAnalyticsResponse, testCountResponse, windowQuery } from './schema.ts';
import * as store from './store.ts';
import { dayWindow, percent } from './window.ts';

const TAG = 'Analytics';
const STATUS = { passed: 'pass', failed: 'fail', flaky: 'flaky', skipped: 'skip' } as const;

export function analyticsRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock } = deps;
  const common = { tag: TAG, errorShape: 'flat' as const };

  /** The rollup scope: an environment of the project, or 0 for all of them. */
  async function scopeOf(projectId: number, environmentId: number | undefined): Promise<number> {
    if (environmentId === undefined) return 0;
    if (!(await getEnvironment(sql, projectId, environmentId))) throw new HttpError(404, `query.environment_id: environment ${environmentId} not found`);
    return environmentId;
  }

  addRoute(ctx, {
    ...common,
    method: 'get',
    path: '/api/v1/analytics/test-runs',
    summary: 'Runs per day (every day of the window, UTC) and a summary',
    query: windowQuery,
    response: runAnalyticsResponse,
    handler: async ({ query, scope }) => {
      const window = dayWindow(query, clock());
      const rows = await store.dailyRuns(sql, scope.projectId, await scopeOf(scope.projectId, query.environment_id), window.from, window.to);
      const byDay = new Map(rows.map((row) => [row.day, row]));
      const daily = window.days.map((date) => {
        const { day: _day, ...counts } = byDay.get(date) ?? {
          day: date,
          run_count: 0,
          passed_runs: 0,
          failed_runs: 0,
          error_runs: 0,
          cancelled_runs: 0,
          rerun_count: 0,
          total_tests: 0,
          passed_tests: 0,
          failed_tests: 0,
          failed_tests_after_snooze: 0,
          flaky_tests: 0,
        };
        return { date, ...counts };
      });
      const sum = (field: keyof (typeof daily)[number]) => daily.reduce((total, day) => total + (day[field] as number), 0);
      const totalRuns = sum('run_count');
      return {
        data: {
          daily,
          summary: {
            total_runs: totalRuns,
            passed_runs: sum('passed_runs'),
            failed_runs: sum('failed_runs'),
            error_runs: sum('error_runs'),
            pass_rate: percent(sum('passed_runs'), totalRuns),
            avg_tests_per_run: totalRuns === 0 ? 0 : Math.round((sum('total_tests') / totalRuns) * 100) / 100,
            rerun_count: sum('rerun_count'),
            rerun_rate: percent(sum('rerun_count'), totalRuns),
          },
        },
      };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'get',
    path: '/api/v1/analytics/test-counts',
    summary: 'Distinct test cases that ran each day (skipped ones left out), and the change over the window',
    query: windowQuery,
    response: testCountResponse,
    handler: async ({ query, scope }) => {
      const window = dayWindow(query, clock());
      const rows = await store.dailyTestCounts(sql, scope.projectId, await scopeOf(scope.projectId, query.environment_id), window.from, window.to);
      const byDay = new Map(rows.map((row) => [row.day, row.test_count]));
      const daily = window.days.map((date) => ({ date, test_count: byDay.get(date) ?? 0 }));
      const counted = daily.filter((day) => day.test_count > 0);
      const first = counted[0]?.test_count ?? 0;
      const latest = counted[counted.length - 1]?.test_count ?? 0;
      return {
        data: { daily, summary: { latest_count: latest, first_count: first, change: latest - first, change_percent: percent(latest - first, first) } },
      };
    },
  });

  addRoute(ctx, {
    ...common,
    method: 'get',
    path: '/api/v1/analytics/test-cases',
    summary: 'Per test case: executions, pass, fail and flaky rates over the window, with recent history',
    query: testCaseAnalyticsQuery,
    response: testCaseAnalyticsResponse,
    handler: async ({ query, scope }) => {
      const window = dayWindow(query, clock());
      const environmentId = await scopeOf(scope.projectId, query.environment_id);
      const filter = {
        testCaseId: query.test_case_id,
        tags: parseTagList(query.tags),
        search: query.search ? `%${escapeLike(query.search.toLowerCase())}%` : null,
        owner: query.owner ?? null,
      };
      const [{ rows, withHistory }, total] = await Promise.all([
        store.testCaseMetrics(sql, scope.projectId, environmentId, window, filter, { by: query.order_by, direction: query.order, limit: query.limit }),
        store.countTestCases(sql, scope.projectId, filter),
      ]);
      const history = await store.testHistory(
        sql,
        scope.projectId,
        environmentId,
        rows.map((row) => row.test_case_id),
        window,
        query.limit_history,
      );
      return {
        data: {
          test_cases: rows.map((row) => ({
            test_case_id: row.test_case_id,
            test_name: row.test_name,
            file_path: row.file_path,
            project_name: row.project_name,
            tags: row.tags,
            owners: row.owners,
            last_run_at: row.last_run_at?.toISOString() ?? null,
            metrics: {
              total_runs: row.total_runs,
              pass_count: row.pass_count,
              fail_count: row.fail_count,
              flaky_count: row.flaky_count,
              pass_rate: percent(row.pass_count, row.total_runs),
              fail_rate: percent(row.fail_count, row.total_runs),
              flaky_rate: percent(row.flaky_count, row.total_runs),
            },
            history: history
              .filter((entry) => entry.test_case_id === row.test_case_id)
              .map((entry) => ({
                timestamp: entry.run_at.toISOString(),
                status: STATUS[entry.outcome],
                test_run_id: String(entry.test_run_id),
                environment_id: String(entry.environment_id),
                executed_at: (entry.started_at ?? entry.run_at).toISOString(),
                duration_total: entry.total_duration ?? 0,
                retries: entry.retry,
              })),
          })),
          summary: { total_test_cases: total, test_cases_with_history: withHistory },
        },
      };
    },
  });
}
