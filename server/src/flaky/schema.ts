import { z } from 'zod';
import { decimalInteger, positiveId } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

export const FLAKINESS_CLASSES = ['healthy', 'flaky', 'broken', 'unknown'] as const;

export const flakyTestSchema = z
  .object({
    test_case_id: z.string(),
    title: z.string(),
    file_path: z.string(),
    runner_project: z.string(),
    owners: z.array(z.string()).describe("the test's owners, from the repository's CODEOWNERS and its `owner` annotations"),
    environment_id: z.number().int(),
    score: z.number().min(0).max(1).openapi({
      description:
        'Share of the counted runs in the window where the test was flaky: passed on a retry, or flipped between pass and fail from the run before on the same commit',
    }),
    class: z.enum(FLAKINESS_CLASSES).openapi({
      description: 'unknown: fewer counted runs than the minimum (10); broken: failed every counted run; flaky: a score above 0; healthy: none of these',
    }),
    runs_counted: z.number().int().openapi({ description: 'Runs of the window that passed or failed with no more than 80% of their tests failed' }),
    flaky_runs: z.number().int().openapi({ description: 'Counted runs where the test was flaky' }),
    failed_runs: z.number().int().openapi({ description: 'Counted runs where the test failed' }),
    runs_needed: z.number().int().openapi({ description: 'Counted runs the test still needs for a class of its own (0 unless its class is unknown)' }),
    last_flaky_run_id: z.number().int().nullable(),
    last_flaky_run_number: z.number().int().nullable().describe("that run's number in the project (#1 its first run)"),
    quarantined: z.boolean().openapi({ description: 'An active snooze covers the test in this environment (made by a person or by the quarantine policy)' }),
  })
  .openapi('FlakyTest');

export const flakyTestsQuery = z
  .object({
    ...paginationQuery(20, 100),
    environment_id: positiveId.optional(),
    class: z.enum(FLAKINESS_CLASSES).optional(),
    early: z
      .enum(['true', 'false'])
      .optional()
      .openapi({ description: 'With class: also the tests still unknown (too few runs) that were flaky or failed in a counted run' }),
    search: z.string().min(1).max(200).optional().openapi({ description: 'Only the tests whose title or file contains this (case aside)' }),
    owner: z.string().min(1).max(200).optional().describe('Only the tests this owner owns, named as CODEOWNERS names it (`@org/team`)'),
    days: decimalInteger(1, 90).default(14).openapi({ description: 'The window: the last N days (UTC), today included' }),
  })
  .strict();

export const flakyTestsResponse = z.object({ data: z.object({ tests: z.array(flakyTestSchema) }), pagination });

export type FlakyTest = z.infer<typeof flakyTestSchema>;
export type FlakinessClass = FlakyTest['class'];

export const QUARANTINE_MODES = ['off', 'suggest', 'auto'] as const;

export const quarantinePolicySchema = z
  .object({
    mode: z.enum(QUARANTINE_MODES).openapi({
      description:
        'off: nothing; suggest: the flaky-tests list shows what would be quarantined, nothing is applied; auto: quarantined and released by the policy',
    }),
    threshold: z.number().min(0).max(1).openapi({ description: 'Score from which a flaky test is quarantined' }),
    cap_percent: z
      .number()
      .min(0)
      .max(100)
      .openapi({ description: "Most tests quarantined at once by the policy, in percent of the tests of the environment's last complete run" }),
    expiry_days: z.number().int().min(1).max(365),
    release_after_clean_runs: z.number().int().min(1).max(1000),
  })
  .openapi('QuarantinePolicy');

export const quarantinePolicyUpdateSchema = quarantinePolicySchema.partial().strict().openapi('QuarantinePolicyUpdate');

export const quarantinePolicyResponse = z.object({ data: z.object({ policy: quarantinePolicySchema }) });

export type QuarantinePolicy = z.infer<typeof quarantinePolicySchema>;

export const DEFAULT_POLICY: QuarantinePolicy = { mode: 'off', threshold: 0.1, cap_percent: 5, expiry_days: 14, release_after_clean_runs: 10 };

export const quarantineEventSchema = z
  .object({
    test_case_id: z.string(),
    environment_id: z.number().int(),
    action: z.enum(['quarantined', 'released']),
    reason: z.string(),
    snooze_id: z.number().int().nullable(),
    created_at: z.string(),
  })
  .openapi('QuarantineEvent');

export const quarantineEventsQuery = z.object({ ...paginationQuery(20, 100), environment_id: positiveId.optional() }).strict();

export const quarantineEventsResponse = z.object({ data: z.object({ events: z.array(quarantineEventSchema) }), pagination });

export type QuarantineEvent = z.infer<typeof quarantineEventSchema>;
