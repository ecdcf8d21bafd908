import { z } from 'zod';

/** What a search looks for: text in a test's title or file, a run's number, branch or commit, a failure group's title. */
export const searchQuery = z
  .object({
    q: z.string().trim().min(1, 'must not be empty').max(200).describe('text; `#12` or `12` also finds run 12, 4 to 40 hex digits a commit'),
    limit: z.coerce.number().int().min(1).max(20).default(5).describe('the most found of each kind'),
  })
  .strict();

export type SearchInput = z.infer<typeof searchQuery>;

const foundTest = z.object({
  test_case_id: z.string(),
  title: z.string(),
  file_path: z.string(),
  runner_project: z.string(),
  is_active: z.boolean().describe('false: no longer in the suite'),
});

const foundRun = z.object({
  id: z.number().int(),
  number: z.number().int(),
  state: z.string(),
  environment_name: z.string(),
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  created_at: z.string(),
  matched: z.enum(['number', 'commit', 'branch']).describe('what of the run the text matched'),
});

const foundGroup = z.object({ id: z.string(), title: z.string(), category: z.string(), status: z.string() });

export const searchResultSchema = z
  .object({
    tests: z.array(foundTest).describe('title or file containing the text (case ignored), tests still in the suite first'),
    runs: z.array(foundRun).describe('the run of that number first, then the newest whose commit starts with or branch contains the text'),
    failure_groups: z.array(foundGroup).describe('title containing the text, most recently seen first'),
  })
  .openapi('SearchResult');

export type SearchResult = z.infer<typeof searchResultSchema>;
export type FoundTest = z.infer<typeof foundTest>;
export type FoundRun = z.infer<typeof foundRun>;
export type FoundGroup = z.infer<typeof foundGroup>;

export const searchResponse = z.object({ data: z.object({ search: searchResultSchema }) });
