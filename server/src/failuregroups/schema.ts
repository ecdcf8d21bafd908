import { FAILURE_CATEGORIES } from './category.ts';
import { TITLE_MAX } from './title.ts';
import { z } from 'zod';
import { MAX_INT4, runnerTestId } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

export const groupParams = z.object({ id: z.string().min(1).max(200) }).strict();
export const memberParams = z.object({ id: z.string().min(1).max(200), test_case_id: runnerTestId }).strict();

export const attachSchema = z
  .object({
    test_run_id: z.number().int().min(1).max(MAX_INT4),
    test_case_id: runnerTestId.optional(),
    pw_test_id: runnerTestId.optional().describe('the same id as test_case_id; either may be given'),
  })
  .strict()
  .refine((body) => body.test_case_id !== undefined || body.pw_test_id !== undefined, {
    message: 'give test_case_id or pw_test_id',
    path: ['test_case_id'],
  })
  .refine((body) => !body.test_case_id || !body.pw_test_id || body.test_case_id === body.pw_test_id, {
    message: 'must equal test_case_id when both are given',
    path: ['pw_test_id'],
  })
  .openapi('AttachMember');

export const memberSchema = z
  .object({
    test_case_id: z.string(),
    state: z.enum(['active', 'detached']),
    source: z.enum(['machine', 'human']),
    first_seen_at: z.string(),
    first_test_run_id: z.number().int().nullable(),
    last_seen_at: z.string(),
    last_test_run_id: z.number().int().nullable(),
    last_environment_id: z.number().int().nullable(),
    environments: z.array(z.number().int()),
    sighting_count: z.number().int(),
    chat_session_id: z.number().int().nullable(),
    match_run_id: z.string().nullable(),
    actor_id: z.string().nullable(),
    detached_at: z.string().nullable(),
    detached_by: z.string().nullable(),
  })
  .openapi('FailureGroupMember');

export const diagnosisSchema = z.object({ summary: z.string(), category: z.string(), author: z.string(), created_at: z.string() });

/** The tracker issue a group or a test is linked to (server/src/trackers), as its last read found it. */
export const linkedIssueSchema = z
  .object({
    link_id: z.number().int(),
    tracker: z.enum(['github', 'gitlab', 'jira', 'linear']),
    key: z.string().nullable().describe("the tracker's name for the issue (GitHub's number, GitLab's iid); null while Proctor is still creating it"),
    url: z.string().nullable(),
    state: z.enum(['open', 'closed']).nullable().describe('as Proctor last read or left it; null before the first read'),
  })
  .openapi('LinkedIssue');

export const failureGroupSchema = z
  .object({
    id: z.string(),
    title: z.string().openapi({
      description:
        "Made from the first failure's error and where it failed (`expect(locator('#total')).toHaveText at checkout.spec.ts:42`), unique within the project; a member may rename it",
    }),
    category: z
      .enum(FAILURE_CATEGORIES)
      .nullable()
      .openapi({ description: 'The kind of its first failure (assertion, locator, timeout, …); null for groups made before 0.2.0' }),
    status: z.enum(['open', 'resolved', 'ignored']),
    diagnosis: diagnosisSchema.nullable(),
    first_seen_at: z.string(),
    last_seen_at: z.string(),
    last_test_run_id: z.number().int().nullable(),
    member_count: z.number().int(),
    occurrence_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    issue: linkedIssueSchema.nullable().openapi({ description: 'The tracker issue the group is linked to (POST /api/tracker-links); null when none' }),
    owners: z.array(z.string()).openapi({
      description: "The owners of its member tests (from the repository's CODEOWNERS and `owner` annotations, as their latest listings found them), sorted",
    }),
  })
  .openapi('FailureGroup');

export const updateGroupSchema = z
  .object({
    diagnosis: z
      .object({ summary: z.string().min(1).max(10_000), category: z.string().min(1).max(100) })
      .strict()
      .optional(),
    status: z.enum(['open', 'resolved', 'ignored']).optional(),
    title: z
      .string()
      .trim()
      .min(1)
      .max(TITLE_MAX)
      .optional()
      .openapi({ description: "The group's name on every page, notification and answer; unique within the project (409 when another group has it)" }),
  })
  .strict()
  .openapi('UpdateFailureGroup');

export const groupListQuery = z
  .object({
    ...paginationQuery(20, 100),
    status: z.enum(['open', 'resolved', 'ignored']).optional(),
    owner: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('only the groups with a member test this owner owns, named as CODEOWNERS names it (`@org/team`, `@user`, an e-mail address)'),
  })
  .strict();

export const memberResponse = z.object({ data: z.object({ member: memberSchema }) });
export const groupResponse = z.object({ data: z.object({ failure_group: failureGroupSchema }) });
export const groupWithMembersResponse = z.object({ data: z.object({ failure_group: failureGroupSchema, members: z.array(memberSchema) }) });
export const groupListResponse = z.object({ data: z.object({ failure_groups: z.array(failureGroupSchema) }), pagination });
