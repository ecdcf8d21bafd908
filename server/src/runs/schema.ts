import { z } from 'zod';
import { ORDER_STRATEGIES } from '@proctor/reporter/runs/order';
import { refusedOverride } from '@proctor/reporter/toolchain/overrides';
import { attachmentViewSchema } from '../artifacts/schema.ts';
import { bodyId, decimalInteger, MAX_INT4, positiveId, runnerTestId, timestamp } from '../http/fields.ts';
import { generalError, pagination } from '../http/openapi.ts';
import { listedTestSchema, ownerQuery } from '../testcases/schema.ts';
import { paginationQuery } from '../http/pagination.ts';
import {
  type ReportRunBody,
  type ResultBatchAnswer,
  type ResultBatchBody,
  type RunStateAnswer,
  type WireErrorFields,
  type ShardBeginBody,
  type ShardEndBody,
  WIRE_LIMITS as LIMIT,
  type WireAttempt,
} from '@proctor/reporter/wire';

import { type RunView, TERMINAL_RUN_STATES, type TriggerBody } from '@proctor/reporter/runs';
import { FAILURE_CATEGORIES } from '../failuregroups/index.ts';
import { runSelectionSchema } from '../selection/index.ts';
import { OUTCOMES, RUN_STATES, TERMINAL_STATES } from '../states.ts';

export { isTerminal, RUN_STATES, type RunState } from '../states.ts';

/** A run's number in its project (#1 its first run): what pages and messages name it by; its `id` is for URLs and the API. */
export const RUN_NUMBER = z.number().int().describe("the run's number in its project, #1 its first run: what pages and messages name it by");

export const summaryDetailSchema = z
  .object({
    test_case_id: z.string(),
    title: z.string(),
    file_path: z.string(),
    runner_project: z.string(),
    status: z.enum(OUTCOMES),
    snoozed: z.boolean(),
    duration: z.number().int().describe('milliseconds, all attempts'),
    retries: z.number().int(),
    error_message: z.string().nullable(),
    failure_group_id: z.string().nullable(),
    failure_group_title: z.string().nullable().describe("The failure group's title (null until the group is made, or without a group)"),
    skip_reason: z.string().nullable().describe('Why a skipped test was skipped, as its test said (`test.skip(condition, reason)`)'),
    owners: z
      .array(z.string())
      .describe(
        "The test's owners (`@org/team`, `@user`, an e-mail address): from the repository's CODEOWNERS and its `owner` annotations, as its latest listing found them",
      ),
    failure_category: z
      .enum(FAILURE_CATEGORIES)
      .nullable()
      .describe("A failed or flaky test's kind of failure, from its error and the steps that led to it; null for the others"),
    attachments: z
      .array(attachmentViewSchema)
      .describe("Screenshots, videos, traces and files of the test's attempts (by retry), with download URLs signed for one hour"),
  })
  .openapi('SummaryDetail');

export const testRunSchema = z
  .object({
    id: z.number().int().describe('the run in URLs and the API'),
    number: RUN_NUMBER,
    state: z.enum(RUN_STATES),
    total_count: z.number().int(),
    success_count: z.number().int(),
    failed_count: z.number().int(),
    skipped_count: z.number().int(),
    flaky_count: z.number().int(),
    duration: z.number().int().nullable().describe('milliseconds from run_started_at to run_ended_at'),
    test_run_branch: z.string().nullable(),
    environment_id: z.number().int(),
    environment_slug: z.string(),
    environment_name: z.string(),
    build_url: z.string().nullable(),
    pull_request: z.number().int().nullable().describe("the pull or merge request the run's CI build was for, as its reporter said"),
    build_branch: z.string().nullable(),
    commit: z.string().nullable(),
    created_at: z.string(),
    run_started_at: z.string().nullable(),
    run_ended_at: z.string().nullable(),
    test_run_head_sha: z.string().nullable(),
    summary_url: z.string(),
    total_shards: z.number().int(),
    rerun_source_id: z.number().int().nullable(),
    error_reason: z.string().nullable(),
    cancel_reason: z.string().nullable(),
    cancelled_by: z
      .string()
      .nullable()
      .describe(
        "who cancelled the run: `max_failures` when fail fast stopped it (its `cancel_reason` names the failures), else a user's id or `key:<id>`; null when not cancelled",
      ),
    max_failures: z.number().int().nullable().describe('fail fast: the run stops once this many tests failed that no snooze covers (null: no limit)'),
    order_strategy: z
      .enum(ORDER_STRATEGIES)
      .nullable()
      .describe(
        "how the server handed the run's units out, its environment's strategy when it was planned: `duration` (longest first) or `failures-first` (likeliest to fail first); null where Playwright chose the order (a reporter's run, static shards)",
      ),
    selection: runSelectionSchema.nullable().describe('which tests a run made with `affected` ran, and why; null for a run that did not ask'),
    pinned: z.boolean().describe('kept, details and attachments, whatever the retention policy, until unpinned'),
    details_deleted: z.boolean().describe("the retention policy deleted the run's results and attachments: its counts stay, flattenedSummaryDetails is empty"),
  })
  .openapi('TestRun');

export const runReadResponse = z.object({
  data: z.object({
    test_run: z.object({
      project: z.object({ id: z.number().int(), name: z.string(), repo_name: z.string() }),
      testRun: testRunSchema,
      flattenedSummaryDetails: z.array(summaryDetailSchema),
    }),
  }),
});

export const runListQuery = z
  .object({
    ...paginationQuery(20, 100),
    environment: z.string().min(1).optional().describe('environment slug'),
    state: z
      .string()
      .regex(new RegExp(`^(${RUN_STATES.join('|')})(,(${RUN_STATES.join('|')}))*$`), `must be comma-separated states: ${RUN_STATES.join(', ')}`)
      .optional(),
    branch: z.string().min(1).optional(),
    owner: ownerQuery.describe(
      'only the runs with a failed or flaky test this owner owns, named as CODEOWNERS or the annotation names it (`@org/team`, `@user`, an e-mail address)',
    ),
  })
  .strict();
export const runListResponse = z.object({ data: z.object({ test_runs: z.array(testRunSchema) }), pagination });

export const runParams = z.object({ id: positiveId }).strict();
export const shardParams = z.object({ id: positiveId, shard: decimalInteger(1, LIMIT.shards) }).strict();

/** The reporter's report-only run: created by its first shard, found by the others through run_key. */
/** Fail fast: how many failures a run takes before it stops. */
const maxFailures = z.number().int().min(1).max(100_000);

export const reportRunSchema = z
  .object({
    environment: z.string().min(1),
    run_key: z.string().min(1).max(LIMIT.runKey).nullable().default(null),
    total_shards: z.number().int().min(1).max(LIMIT.shards).default(1),
    branch: z.string().max(LIMIT.branch).nullable().default(null),
    commit: z.string().max(LIMIT.commit).nullable().default(null),
    build_url: z.string().max(LIMIT.url).nullable().default(null),
    pull_request: z.number().int().min(1).max(MAX_INT4).nullable().default(null).describe('the pull or merge request the CI build is for'),
    max_failures: maxFailures.nullable().default(null).describe("fail fast: stop the run once this many tests failed (null: the environment's limit)"),
  })
  .strict()
  .openapi('ReportRun');

const snapshotPath = z.string().max(LIMIT.snapshotPath);
const snapshotLayoutSchema = z
  .object({
    platform: z.string().min(1).max(50).describe("`process.platform` of the machine that ran the tests: Playwright's default snapshot suffix"),
    config_dir: snapshotPath.describe("the config's folder relative to the repository's root (`.`: the root)"),
    projects: z
      .array(
        z
          .object({
            name: z.string().max(LIMIT.runnerProject),
            test_dir: snapshotPath.describe("the project's testDir, relative to the config's folder"),
            snapshot_dir: snapshotPath.describe("the project's snapshotDir, relative to the config's folder"),
            path_template: snapshotPath.nullable().describe("`expect.toHaveScreenshot.pathTemplate`, else `snapshotPathTemplate`; null: Playwright's default"),
          })
          .strict(),
      )
      .max(LIMIT.snapshotProjects),
  })
  .strict()
  .openapi('SnapshotLayout');

export const shardBeginSchema = z
  .object({
    tests: z
      .array(listedTestSchema)
      .max(LIMIT.testsPerBegin)
      .superRefine((tests, ctx) => {
        // A test is one row of the suite: listed twice, its row would be written twice in one statement.
        const first = new Map<string, number>();
        tests.forEach((test, index) => {
          const seen = first.get(test.id);
          if (seen === undefined) first.set(test.id, index);
          else ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `test "${test.id}" is listed already, as tests.${seen}` });
        });
      }),
    commit: z.string().max(LIMIT.commit).nullable().default(null),
    /** True when the shard's list is the whole suite's share (no grep, project or file filter). */
    complete: z.boolean().default(false),
    started_at: timestamp.optional(),
    snapshots: snapshotLayoutSchema
      .optional()
      .describe("where the suite's Playwright keeps its screenshot baselines: what an approved screenshot's path in the repository is computed from"),
  })
  .strict()
  .openapi('ShardBegin');

/** A duration as PostgreSQL's integer holds it (24 days and more). */
const milliseconds = z.number().int().min(0).max(MAX_INT4);

const finalOutcomeSchema = z
  .object({
    outcome: z.enum(['expected', 'unexpected', 'flaky', 'skipped']),
    total_duration: milliseconds,
    error_message: z.string().max(LIMIT.errorMessage).nullable(),
    failure_group_id: z.string().max(LIMIT.failureGroupId).nullable(),
    skip_reason: z.string().max(LIMIT.skipReason).nullable().optional(),
    failed_steps: z
      .array(z.object({ category: z.string().max(LIMIT.stepCategory), title: z.string().max(LIMIT.stepTitle) }).strict())
      .max(LIMIT.failedSteps)
      .nullable()
      .optional(),
    stack_frames: z.array(z.string().max(LIMIT.stackFrame)).max(LIMIT.stackFrames).nullable().optional(),
  })
  .strict();

export const attemptSchema = z
  .object({
    test_id: runnerTestId,
    retry: z.number().int().min(0).max(LIMIT.retries),
    status: z.enum(['passed', 'failed', 'timedOut', 'skipped', 'interrupted']),
    duration: milliseconds,
    error_message: z.string().max(LIMIT.errorMessage).nullable(),
    error_location: z.string().max(LIMIT.errorLocation).nullable(),
    stdout_tail: z.string().max(LIMIT.outputTail).nullable(),
    stderr_tail: z.string().max(LIMIT.outputTail).nullable(),
    started_at: timestamp.nullable(),
    parallel_index: z
      .number()
      .int()
      .min(0)
      .max(LIMIT.workers)
      .nullable()
      .optional()
      .describe('the Playwright worker slot (`parallelIndex`) that ran the attempt'),
    final: finalOutcomeSchema.nullable(),
  })
  .strict();

export const resultBatchSchema = z
  .object({ shard: z.number().int().min(1).max(LIMIT.shards), results: z.array(attemptSchema).min(1).max(LIMIT.resultsPerBatch) })
  .strict()
  .openapi('ResultBatch');

export const shardEndSchema = z
  .object({
    status: z
      .enum(['passed', 'failed', 'timedout', 'interrupted', 'crashed'])
      .describe("Playwright's end status; `crashed`: an agent's Playwright ended without its reporter ending the shard"),
    errors: z.array(z.string().max(LIMIT.errorMessage)).max(LIMIT.shardErrors).default([]),
  })
  .strict()
  .openapi('ShardEnd');

export const resultBatchResponse = z.object({
  data: z.object({
    received: z.number().int(),
    recorded: z.number().int(),
    test_run: z
      .object({
        state: z.enum(RUN_STATES),
        cancelled_by: z.string().nullable().describe("`max_failures` when this batch's failures reached the run's limit"),
      })
      .describe(
        "the run after this batch: `cancelled` when the batch stopped it (fail fast), and the reporter then stops its tests; later batches are refused with `code: 'run_ended'`",
      ),
  }),
});

export const runStateResponse = z.object({
  data: z.object({
    test_run: z.object({
      state: z.enum(RUN_STATES),
      cancelled_by: z.string().nullable().describe('who cancelled the run: `max_failures` when fail fast stopped it; null while it runs'),
      cancel_reason: z.string().nullable().describe('why it was cancelled, as the run page says it; null while it runs'),
    }),
  }),
});

/**
 * The wire format is the reporter's (reporter/src/api/wire.ts): what it sends must pass these schemas,
 * and what they give the server must be what it sends. A change on either side fails the type check.
 */
type Accepts<Schema extends z.ZodType, Wire> = [Wire] extends [z.input<Schema>] ? ([z.output<Schema>] extends [Wire] ? true : false) : false;
const wireAgrees: [
  Accepts<typeof reportRunSchema, ReportRunBody>,
  Accepts<typeof shardBeginSchema, ShardBeginBody>,
  Accepts<typeof attemptSchema, WireAttempt>,
  Accepts<typeof resultBatchSchema, ResultBatchBody>,
  Accepts<typeof shardEndSchema, ShardEndBody>,
] = [true, true, true, true, true];
void wireAgrees;

/** What the reporter reads of the answers: a change of the server's that it would misread fails the type check. */
type Reads<Answer, Wire> = [Answer] extends [Wire] ? true : false;
const answersAgree: [
  Reads<z.output<typeof resultBatchResponse>, ResultBatchAnswer>,
  Reads<z.output<typeof runStateResponse>, RunStateAnswer>,
  Reads<z.output<typeof generalError>['error'], WireErrorFields>,
] = [true, true, true];
void answersAgree;

/**
 * Whether a result's `started_at` of this text is one the database stores: for attempts made by
 * the server (a JUnit upload's), which no request's validation has checked. A refused one would
 * fail its whole write.
 */
export function isStorableStartedAt(text: string): boolean {
  return timestamp.safeParse(text).success;
}

export type Attempt = z.infer<typeof attemptSchema>;
export type ShardBegin = z.infer<typeof shardBeginSchema>;
export type ShardEnd = z.infer<typeof shardEndSchema>;
export type ReportRun = z.infer<typeof reportRunSchema>;
export type TestRun = z.infer<typeof testRunSchema>;
export type SummaryDetail = z.infer<typeof summaryDetailSchema>;

export const triggerSchema = z
  .object({
    environment: z.string().min(1).max(100).describe('environment slug'),
    build: z
      .object({
        url: z.string().max(2000).optional(),
        branch: z.string().max(500).optional(),
        commit: z.string().max(100).optional(),
        commit_url: z.string().max(2000).optional(),
        repo: z.string().max(500).optional(),
        version: z.string().max(200).optional(),
      })
      .strict()
      .optional(),
    metadata: z.record(z.string().max(200), z.union([z.string().max(2000), z.number()])).optional(),
    environment_variables_overrides: z
      .array(
        z
          .object({
            name: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
              .superRefine((name, ctx) => {
                const refusal = refusedOverride(name);
                if (refusal) ctx.addIssue({ code: 'custom', message: refusal });
              }),
            value: z.string().max(10_000),
          })
          .strict(),
      )
      .max(200)
      .optional(),
    tags: z.array(z.string().min(1).max(100)).max(100).optional(),
    test_case_ids: z.array(runnerTestId).max(10_000).optional(),
    branch: z.string().min(1).max(500).optional(),
    project_id: bodyId.optional(),
    send_notifications: z.boolean().default(true),
    total_shards: z.number().int().min(1).max(50).optional(),
    rerun_source_id: bodyId.optional(),
    rerun_only_failed: z.boolean().optional(),
    max_failures: maxFailures
      .optional()
      .describe("fail fast: stop the run once this many tests failed that no snooze covers (default: the environment's limit)"),
    affected: z
      .boolean()
      .optional()
      .describe(
        "run only the tests Playwright finds affected by the changes since the environment's last passing run on the branch, plus those that failed or were flaky since; every test when that cannot be told (the run's `selection` says why)",
      ),
    scm_actor: z.string().max(200).optional(),
    distribution: z
      .enum(['shards', 'agents'])
      .optional()
      .describe(
        "`shards` (default): the server runs total_shards static shards. `agents`: agents pull the run unit by unit, longest first (`proctor agent --run ID`, and the server itself when it executes runs). A rerun keeps its source's.",
      ),
  })
  .strict()
  .refine((body) => !(body.build && body.branch), { message: 'cannot be combined with build', path: ['branch'] })
  .refine((body) => !body.rerun_only_failed || body.rerun_source_id !== undefined, { message: 'needs rerun_source_id', path: ['rerun_only_failed'] })
  .openapi('TriggerRun');

export const triggerResponse = z.object({
  data: z.object({
    trigger: z.object({ success: z.boolean() }),
    // The contract's fields, exactly (interface.md): the run's number is read with the run.
    test_run: z.object({
      id: z.number().int(),
      state: z.enum(RUN_STATES),
      test_run_branch: z.string().nullable(),
      created_at: z.string(),
    }),
  }),
});

/**
 * The waiters of a triggered run (the Action, `proctor-ci run`) share the reporter's client
 * (reporter/src/runs/client.ts): what it sends must pass the trigger's schema, what it reads must be
 * in the run's answer, and a run ends in the states it waits for. A change on either side fails the type check.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const runClientAgrees: [
  [TriggerBody] extends [z.input<typeof triggerSchema>] ? true : false,
  [z.output<typeof runReadResponse>['data']['test_run']] extends [RunView] ? true : false,
  Same<(typeof TERMINAL_RUN_STATES)[number], (typeof TERMINAL_STATES)[number]>,
] = [true, true, true];
void runClientAgrees;

export const cancelSchema = z
  .object({ reason: z.string().max(2000).optional() })
  .strict()
  .openapi('CancelRun');

export type Trigger = z.infer<typeof triggerSchema>;

/** How a shard ended, as its reporter says. */
export type ShardEndStatus = z.output<typeof shardEndSchema>['status'];
