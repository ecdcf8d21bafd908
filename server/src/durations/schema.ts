import { z } from 'zod';
import { positiveId, runnerTestId } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';
import { SHIFT_RULES } from './shift.ts';

export const slowerTestSchema = z
  .object({
    test_case_id: z.string(),
    title: z.string(),
    file_path: z.string(),
    runner_project: z.string(),
    environment_id: z.number().int(),
    environment_name: z.string(),
    started_run_id: z.number().int().nullable().describe('the first run of the slower part; null once that run is deleted'),
    started_run_number: z.number().int().describe("that run's number in the project"),
    baseline_ms: z.number().int().describe('median passed duration before it, milliseconds'),
    recent_ms: z.number().int().describe('median passed duration since, milliseconds'),
    rise: z.number().describe('recent_ms / baseline_ms − 1: 0.3 is 30% slower'),
    z: z.number().describe("the rank test's z-score (Mann–Whitney U of the slower part against the look-back)"),
    runs_counted: z.number().int().describe(`the passed runs looked at (at most ${SHIFT_RULES.maxRuns})`),
    detected_at: z.string(),
  })
  .openapi('SlowerTest');

export const slowerTestsQuery = z
  .object({
    ...paginationQuery(20, 100),
    environment_id: positiveId.optional(),
    test_case_id: runnerTestId.optional(),
  })
  .strict();

export const slowerTestsResponse = z.object({ data: z.object({ tests: z.array(slowerTestSchema) }), pagination });

export type SlowerTest = z.infer<typeof slowerTestSchema>;
