import { z } from 'zod';
import { positiveId } from '../http/fields.ts';

export const DIGEST_PERIODS = ['day', 'week'] as const;
export const PERIOD_DAYS: Record<(typeof DIGEST_PERIODS)[number], number> = { day: 1, week: 7 };

const runsSummary = z.object({
  runs: z.number().int(),
  passed_runs: z.number().int(),
  pass_rate: z.number().nullable().describe('passed runs / runs; null without runs'),
});

const testLine = z.object({ test_case_id: z.string(), title: z.string(), file_path: z.string() });

const turned = testLine.extend({
  run_id: z.number().int().describe('where it turned: its first flaky run of the period, or the first failure of its streak'),
  run_number: z.number().int(),
});

export const digestSchema = z
  .object({
    environment_id: z.number().int(),
    environment_name: z.string(),
    period: z.enum(DIGEST_PERIODS),
    from: z.string().describe('first day of the period (UTC), inclusive'),
    to: z.string().describe('last day of the period (UTC), inclusive: today'),
    runs: runsSummary.extend({ previous: runsSummary.describe('the period before, of the same length') }),
    turned_flaky: z.array(turned).describe('flaky in the period, with no flaky run in the 14 days before it'),
    turned_broken: z.array(turned).describe("failing in the environment's latest run and every run since a failure streak that began in the period"),
    flakiest: z
      .array(testLine.extend({ score: z.number(), flaky_runs: z.number().int(), runs_counted: z.number().int() }))
      .describe('the flaky class over the last 14 days, highest score first (at most 5)'),
    most_failing: z
      .array(testLine.extend({ fail_count: z.number().int(), runs: z.number().int() }))
      .describe('the highest fail rate in the period (at most 5)'),
    slowest: z
      .array(testLine.extend({ mean_duration: z.number().nullable(), runs: z.number().int() }))
      .describe('the highest mean duration in the period (at most 5)'),
    slower: z
      .array(
        testLine.extend({
          baseline_ms: z.number().int(),
          recent_ms: z.number().int(),
          started_run_id: z.number().int().nullable(),
          started_run_number: z.number().int(),
        }),
      )
      .describe('tests that got slower and stayed so (GET /api/slower-tests), the largest rise first (at most 10)'),
    flakier: z
      .array(
        testLine.extend({
          flaky_rate: z.number().describe('flaky runs / counted runs in the period'),
          flaky_runs: z.number().int(),
          runs_counted: z.number().int(),
          previous_flaky_rate: z
            .number()
            .nullable()
            .describe('the same share over the look-back (the 14 days before the period); null without counted runs there'),
          previous_runs_counted: z.number().int(),
        }),
      )
      .describe(
        'the largest rises of flakiness: tests flaky in a larger share of their runs in the period than in the 14 days before it, the largest rise first (at most 5)',
      ),
    open_issues: z
      .array(
        z.object({
          subject_kind: z.enum(['failure_group', 'test']),
          subject_id: z.string().describe("the failure group's id, or the test's"),
          title: z.string().describe("the failure group's title, or the test's"),
          tracker: z.enum(['github', 'gitlab', 'jira', 'linear']),
          issue_key: z.string().describe("the tracker's name for the issue (GitHub's number, GitLab's iid, Jira's key, Linear's identifier)"),
          issue_url: z.string().nullable(),
        }),
      )
      .describe(
        "the project's tracker issues open as Proctor last read them (GET /api/tracker-links): those of the tests this digest lists first, then the newest (at most 20)",
      ),
    open_issues_total: z.number().int().describe('how many tracker issues of the project are open'),
  })
  .openapi('Digest');

export const digestQuery = z
  .object({
    environment_id: positiveId,
    period: z.enum(DIGEST_PERIODS).default('week'),
  })
  .strict();

export const digestResponse = z.object({ data: z.object({ digest: digestSchema }) });

export type Digest = z.infer<typeof digestSchema>;
export type DigestPeriod = Digest['period'];
