import { WIRE_LIMITS as LIMIT } from '@proctor/reporter/wire';
import { z } from 'zod';
import { MAX_INT4, positiveId, runnerTestId, truncatedText } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

/** `?owner=`: the tests one owner owns, named as CODEOWNERS or the annotation names them (`@org/team`). */
export const ownerQuery = z.string().min(1).max(LIMIT.owner).optional().describe('one owner, as CODEOWNERS names it (`@org/team`, `@user`, an e-mail address)');

export const testCaseSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    file_path: z.string(),
    suites: z.array(z.string()),
    runner_project: z.string(),
    tags: z.array(z.string()),
    owners: z
      .array(z.string())
      .describe(
        "its owners (`@user`, `@org/team`, an e-mail address): from the repository's CODEOWNERS at the last listing's commit and its `owner` annotations",
      ),
    created_at: z.string(),
    updated_at: z.string(),
    first_seen_commit_sha: z.string().nullable(),
    last_seen_commit_sha: z.string().nullable(),
  })
  .openapi('TestCase');

export const testCaseListQuery = z
  .object({
    project_id: positiveId,
    file_path: z.string().min(1).optional().describe('prefix match'),
    runner_project: z.string().min(1).optional(),
    tags: z.string().optional().describe('comma-separated; a test with any of them matches; @smoke and smoke alike'),
    owner: ownerQuery,
    first_seen_commit_sha: z.string().min(1).optional(),
    last_seen_commit_sha: z.string().min(1).optional(),
    is_active: z.enum(['true', 'false']).default('true'),
    search: z.string().min(1).max(200).optional().describe('substring of name, file path or suites, case-insensitive'),
    ...paginationQuery(100, 1000),
  })
  .strict();

export const testCaseParams = z.object({ id: runnerTestId }).strict();
export const replaceTagsSchema = z
  .object({
    tags: z
      .array(
        z
          .string()
          .min(1)
          .max(100)
          .regex(/^@?[^\s,@]+$/, 'must be one word, such as @smoke'),
      )
      .max(100),
  })
  .strict()
  .openapi('ReplaceTags');

/** A test as the runner lists it: what runs and syncs write into the inventory. */
export const listedTestSchema = z
  .object({
    id: runnerTestId,
    title: truncatedText(LIMIT.title),
    file_path: truncatedText(LIMIT.title),
    suites: z.array(truncatedText(LIMIT.title)).max(LIMIT.suitesPerTest),
    runner_project: z.string().max(LIMIT.runnerProject),
    tags: z.array(z.string().max(LIMIT.tag)).max(LIMIT.tagsPerTest),
    line: z.number().int().min(0).max(MAX_INT4).nullable(),
    column: z.number().int().min(0).max(MAX_INT4).nullable(),
    owners: z.array(truncatedText(LIMIT.owner)).max(LIMIT.ownersPerTest).optional(),
  })
  .strict();

export type ListedTest = z.infer<typeof listedTestSchema>;

export const testCaseListResponse = z.object({ data: z.object({ test_cases: z.array(testCaseSchema) }), pagination });
export const testCaseResponse = z.object({ data: z.object({ test_case: testCaseSchema }) });

export type TestCaseListQuery = z.infer<typeof testCaseListQuery>;
