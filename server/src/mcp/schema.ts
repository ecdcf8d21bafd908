import { z } from 'zod';
import { FLAKINESS_CLASSES } from '../flaky/index.ts';
import { bodyId, runnerTestId, timestamp } from '../http/fields.ts';
import { RUN_STATES } from '../states.ts';
import { DIGEST_PERIODS } from '../digests/index.ts';

// The MCP tools' inputs, from the API's own field schemas: a run id is a body id, a test id a
// runner's, a time the API's timestamp, a state and a class the API's enums.

const page = z.number().int().min(1).max(10_000).default(1);
const perPage = z.number().int().min(1).max(50).default(20);
const groupStatus = z.enum(['open', 'resolved', 'ignored']);
const groupId = z.string().min(1).max(200);
const owner = z.string().min(1).max(200).optional().describe('only the tests this owner owns, as CODEOWNERS names it (`@org/team`, `@user`)');

export const TOOL_INPUTS = {
  list_runs: {
    environment: z.string().min(1).max(200).optional().describe("an environment's slug"),
    branch: z.string().min(1).max(500).optional(),
    state: z.enum(RUN_STATES).optional(),
    since: timestamp.optional().describe('runs made at or after this time (ISO 8601)'),
    owner: owner.describe('only the runs with a failed or flaky test this owner owns, as CODEOWNERS names it (`@org/team`, `@user`)'),
    page,
    per_page: perPage,
  },
  get_run: { run_id: bodyId, page, owner },
  get_test: { test_case_id: runnerTestId },
  search_tests: {
    query: z.string().max(200).describe('a part of the title, file or suites, or a tag such as @smoke; empty with an owner: all their tests'),
    owner,
    per_page: perPage,
  },
  list_flaky_tests: { environment_id: bodyId.optional(), class: z.enum(FLAKINESS_CLASSES).optional(), owner, page, per_page: perPage },
  get_digest: {
    environment_id: bodyId,
    period: z.enum(DIGEST_PERIODS).default('week').describe('the last day or the last 7 days (UTC), today included'),
  },
  list_failure_groups: {
    status: groupStatus.optional(),
    owner: owner.describe('only the groups with a member test this owner owns, as CODEOWNERS names it (`@org/team`, `@user`)'),
    page,
    per_page: perPage,
  },
  get_failure_group: { failure_group_id: groupId },
  compare_runs: { run_id: bodyId, other_run_id: bodyId.optional().describe('by default, the previous run of the same environment and branch') },
  snooze_test: {
    test_case_id: runnerTestId,
    until: timestamp.describe('when the snooze ends (ISO 8601), in the future'),
    reason: z.string().min(1).max(5000),
    environment_id: bodyId.optional().describe('only in this environment; every environment without it'),
    run_id: bodyId.optional().describe('the run the snooze is made from'),
  },
  rerun_failed: { run_id: bodyId },
  set_failure_group_status: { failure_group_id: groupId, status: groupStatus },
} as const;

export const PROMPT_ARGS = { triage_run: { run_id: z.string().regex(/^\d{1,10}$/, 'a run id') } } as const;
