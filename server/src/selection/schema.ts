import { z } from 'zod';
import { idParams } from '../http/fields.ts';

/** What a run asked to run with `affected` did run: the tests a change can break, or all of them and why. */
export const runSelectionSchema = z
  .object({
    mode: z.enum(['affected', 'all']).describe('`affected`: only the tests Playwright found affected plus the ones to run again; `all`: every test'),
    base_commit: z.string().nullable().describe("the commit of the environment's last passing run on the branch, the changes since which were looked at"),
    base_run_id: z.number().int().nullable().describe('that passing run'),
    reason: z.string().nullable().describe('why every test ran although the run asked for the affected ones (`all`); null for `affected`'),
    left_out: z.number().int().describe('how many tests of the suite did not run because no change since the base commit can affect them'),
  })
  .openapi('RunSelection');

export type RunSelection = z.infer<typeof runSelectionSchema>;

export const affectedBaseParams = idParams;
export const affectedBaseQuery = z.object({ branch: z.string().min(1).max(500).describe('the branch whose last passing run is the base') }).strict();

const rerunTestSchema = z.object({
  test_case_id: z.string(),
  title: z.string(),
  file_path: z.string(),
  runner_project: z.string(),
  status: z.enum(['failed', 'flaky']),
  run_id: z.number().int().describe('the latest run since the base (or the base) where it failed or was flaky'),
});

export const affectedBaseResponse = z.object({
  data: z.object({
    base: z
      .object({ run_id: z.number().int(), run_number: z.number().int(), commit: z.string() })
      .nullable()
      .describe('the last passing run of the environment on the branch, with its commit; null: none, so every test must run'),
    full_run_due: z.string().nullable().describe("why the next affected run must run every test (the environment's `full_run_every`); null when it need not"),
    tests: z
      .array(rerunTestSchema)
      .describe('the tests that failed or were flaky in the base run or any later run of the environment on the branch: to run again'),
  }),
});

export type RerunTest = z.infer<typeof rerunTestSchema>;
export type AffectedBase = z.infer<typeof affectedBaseResponse>['data'];
