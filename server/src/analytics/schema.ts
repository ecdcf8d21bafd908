import { z } from 'zod';
import { dayOrTimestamp, positiveId } from '../http/fields.ts';

const date = dayOrTimestamp.describe('ISO 8601; the day (UTC) counts whole');

const windowFields = {
  days: z.coerce.number().int().min(1).max(90).default(7).describe('today (UTC) and the days before; ignored with start_date and end_date'),
  start_date: date.optional(),
  end_date: date.optional(),
  environment_id: positiveId.optional(),
};

export const windowQuery = z.object(windowFields).strict();

export const testCaseAnalyticsQuery = z
  .object({
    ...windowFields,
    test_case_id: z.string().min(1).max(100).optional().describe('one test case with its history; search, tags, order_by, order and limit are then ignored'),
    search: z.string().min(1).max(200).optional().describe('substring of the test name or file path'),
    tags: z.string().optional().describe('comma-separated; a test with any of them matches'),
    owner: z.string().min(1).max(200).optional().describe('only the tests this owner owns, named as CODEOWNERS names it (`@org/team`)'),
    order_by: z.enum(['fail_rate', 'flaky_rate', 'last_run']).default('last_run'),
    order: z.enum(['asc', 'desc']).default('desc'),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    limit_history: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();

export const dailyRunSchema = z.object({
  date: z.string(),
  run_count: z.number().int(),
  passed_runs: z.number().int(),
  failed_runs: z.number().int(),
  error_runs: z.number().int(),
  cancelled_runs: z.number().int(),
  rerun_count: z.number().int(),
  total_tests: z.number().int(),
  passed_tests: z.number().int(),
  failed_tests: z.number().int(),
  failed_tests_after_snooze: z.number().int(),
  flaky_tests: z.number().int(),
});

export const runAnalyticsResponse = z.object({
  data: z.object({
    daily: z.array(dailyRunSchema),
    summary: z.object({
      total_runs: z.number().int(),
      passed_runs: z.number().int(),
      failed_runs: z.number().int(),
      error_runs: z.number().int(),
      pass_rate: z.number().describe('0-100'),
      avg_tests_per_run: z.number(),
      rerun_count: z.number().int(),
      rerun_rate: z.number().describe('0-100'),
    }),
  }),
});

export const testCountResponse = z.object({
  data: z.object({
    daily: z.array(z.object({ date: z.string(), test_count: z.number().int() })),
    summary: z.object({
      latest_count: z.number().int().describe('the last day of the window with tests'),
      first_count: z.number().int().describe('the first day of the window with tests'),
      change: z.number().int(),
      change_percent: z.number().describe('change / first_count × 100; 0 when first_count is 0'),
    }),
  }),
});

export const historyEntrySchema = z.object({
  timestamp: z.string(),
  status: z.enum(['pass', 'fail', 'flaky', 'skip']),
  test_run_id: z.string(),
  environment_id: z.string(),
  executed_at: z.string(),
  duration_total: z.number().int(),
  retries: z.number().int(),
});

export const testCaseAnalyticsResponse = z.object({
  data: z.object({
    test_cases: z.array(
      z.object({
        test_case_id: z.string(),
        test_name: z.string(),
        file_path: z.string(),
        project_name: z.string(),
        tags: z.array(z.string()),
        owners: z.array(z.string()).describe("the test's owners, from the repository's CODEOWNERS and its `owner` annotations"),
        last_run_at: z.string().nullable(),
        metrics: z.object({
          total_runs: z.number().int(),
          pass_count: z.number().int(),
          fail_count: z.number().int(),
          flaky_count: z.number().int(),
          pass_rate: z.number(),
          fail_rate: z.number(),
          flaky_rate: z.number(),
        }),
        history: z.array(historyEntrySchema),
      }),
    ),
    summary: z.object({ total_test_cases: z.number().int(), test_cases_with_history: z.number().int() }),
  }),
});

export type WindowQuery = z.infer<typeof windowQuery>;
export type TestCaseAnalyticsQuery = z.infer<typeof testCaseAnalyticsQuery>;
