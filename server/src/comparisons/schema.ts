import { z } from 'zod';
import { decimalInteger, positiveId } from '../http/fields.ts';
import { OUTCOMES } from '../states.ts';

export const compareParams = z.object({ id: positiveId, otherId: positiveId }).strict();

export const compareQuery = z
  .object({
    limit: decimalInteger(1, 1000).default(200).openapi({ description: 'Most tests listed in each list (each list says how many it has in all)' }),
  })
  .strict();

const outcome = z.enum(OUTCOMES).nullable();

export const comparedTestSchema = z
  .object({
    test_case_id: z.string(),
    title: z.string(),
    file_path: z.string(),
    runner_project: z.string(),
    status: outcome.describe('in the run; null when the run did not have the test'),
    base_status: outcome.describe('in the run it is compared with; null when that run did not have the test'),
    duration: z.number().int().nullable().describe('milliseconds, all attempts, in the run'),
    base_duration: z.number().int().nullable(),
    error_message: z.string().nullable().describe("the run's final error, for a failure"),
    failure_group_id: z.string().nullable(),
    failure_group_title: z.string().nullable(),
  })
  .openapi('ComparedTest');

const comparedList = z.object({ total: z.number().int(), tests: z.array(comparedTestSchema) });

export const COMPARED_LISTS = ['new_failures', 'fixed', 'still_failing', 'added', 'removed', 'flaky'] as const;
export type ComparedList = (typeof COMPARED_LISTS)[number];

const runRef = z.object({
  id: z.number().int(),
  number: z.number().int().describe("the run's number in its project: what pages name it by"),
  state: z.string(),
  environment_slug: z.string(),
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  created_at: z.string(),
});

export const comparisonSchema = z
  .object({
    run: runRef,
    base: runRef.describe('the run compared with'),
    new_failures: comparedList.describe('failed in the run, and passed, was flaky or skipped in the other, or was not in it'),
    fixed: comparedList.describe('failed in the other run, passed or was flaky in this one'),
    still_failing: comparedList.describe('failed in both'),
    added: comparedList.describe('in this run only'),
    removed: comparedList.describe('in the other run only'),
    flaky: comparedList.describe('flaky in either run'),
    duration_changes: comparedList.describe('tests that passed (or were flaky) in both, by how much their duration changed, most first'),
  })
  .openapi('RunComparison');

export const comparisonResponse = z.object({ data: z.object({ comparison: comparisonSchema }) });

export type ComparedTest = z.infer<typeof comparedTestSchema>;
export type Comparison = z.infer<typeof comparisonSchema>;
