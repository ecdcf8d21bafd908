import { z } from 'zod';
import { type JunitUploadAnswer as WireAnswer, WIRE_LIMITS as LIMIT } from '@proctor/reporter/wire';
import { decimalInteger, MAX_INT4 } from '../http/fields.ts';
import { RUN_NUMBER } from '../runs/index.ts';
import { RUN_STATES } from '../states.ts';
import { RESULT_FORMATS } from './formats/reader.ts';

export const JUNIT_LIMITS = {
  /** Files in one upload. */
  files: 1000,
  /** A failure's text kept (its message and first frames). */
  failureText: 16_000,
  outputTail: LIMIT.outputTail,
  properties: 50,
  attachmentsPerTest: 20,
  /** Attachments an upload's answer names for the client to send. */
  attachmentsPerUpload: 2000,
  /** Retries one testcase records. */
  retries: LIMIT.retries,
  /** Testsuites nested in each other; beyond, a 400 (runners nest a few). */
  depth: 64,
  /** Characters of the names (and file) of the testsuites around a testcase, which its id hashes; beyond, a 400. */
  suiteChars: 8000,
  /**
   * Attempts written to the database at once: up to this many, or fewer once their text (output,
   * errors) reaches `batchChars`. Fewer, larger statements for the usual small testcases; the text
   * held per batch (two are held: one written while the next is read) bounded whatever they log.
   */
  batch: 4000,
  batchChars: 4_000_000,
} as const;

const optionalText = (max: number) => z.string().min(1).max(max).optional();

/** `POST /api/test-runs/junit`'s query (the route takes every format): the run the files report into, as a reporter's report-run body says it. */
export const junitUploadQuery = z
  .object({
    environment: z.string().min(1).max(100).describe('environment slug'),
    run_key: optionalText(LIMIT.runKey).describe("the CI build's id: the uploads of one build (its shards) join one run; none, a run of this upload alone"),
    shard: decimalInteger(1, LIMIT.shards).default(1).describe('this upload is shard `shard` of `total_shards`; the run ends when each has been uploaded'),
    total_shards: decimalInteger(1, LIMIT.shards).default(1),
    branch: optionalText(LIMIT.branch),
    commit: optionalText(LIMIT.commit),
    build_url: optionalText(LIMIT.url),
    pull_request: decimalInteger(1, MAX_INT4).optional().describe('the pull or merge request the CI build is for'),
    format: z
      .enum(RESULT_FORMATS)
      .optional()
      .describe("the files' format, forced; none, each file's is detected from its content (its XML root element, its JSON's shape)"),
  })
  .strict()
  .refine((query) => query.shard <= query.total_shards, { message: 'must be at most total_shards', path: ['shard'] });

export type JunitUploadQuery = z.infer<typeof junitUploadQuery>;

const uploadedTest = z.object({
  test_case_id: z.string(),
  title: z.string(),
  file_path: z.string(),
  snoozed: z.boolean(),
});

const totals = z.object({ tests: z.number().int(), failures: z.number().int(), errors: z.number().int(), skipped: z.number().int() });

export const junitUploadResponse = z.object({
  data: z.object({
    test_run: z.object({
      id: z.number().int().describe('the run in URLs and the API'),
      number: RUN_NUMBER,
      state: z.enum(RUN_STATES),
      summary_url: z.string(),
    }),
    files: z
      .array(
        z.object({
          name: z.string(),
          format: z.enum(RESULT_FORMATS).describe('the format the file was read as: detected from its content, or forced by the query'),
          testcases: z.number().int().describe('the testcases the file holds'),
          tests: z.number().int().describe('the tests Proctor read from them: a testcase each, but for the runs of one test a format marks as retries'),
          failures: z.number().int().describe('tests whose last run failed with a `failure`'),
          errors: z.number().int().describe('tests whose last run failed with an `error`'),
          skipped: z.number().int(),
          totals: totals
            .nullable()
            .describe("the totals the file's outermost testsuites state (`tests`, `failures`, `errors`, `skipped`), summed; null when none does"),
          differences: z
            .array(z.string())
            .describe(
              "why Proctor's counts differ from the file's totals, one reason each (retries read by a rule, totals that are not the testcases'); empty when they agree",
            ),
        }),
      )
      .describe('the files, in the order they came, each as read'),
    counts: z.object({
      tests: z.number().int(),
      passed: z.number().int(),
      failed: z.number().int(),
      flaky: z.number().int(),
      skipped: z.number().int(),
      failed_snoozed: z.number().int().describe('failed tests a snooze covers: they do not fail the run'),
    }),
    failed_tests: z.array(uploadedTest).describe('the first 100 failed tests of this upload'),
    attachments: z
      .array(z.object({ file: z.string(), path: z.string(), test_case_id: z.string(), retry: z.number().int() }))
      .describe(
        "The files the testcases' output names (`[[ATTACHMENT|path]]`), for the client to send with `POST /api/test-runs/{id}/attachments`: the upload's file that names each, the path as written there (relative to that file's folder), and the attempt it belongs to; the first 2,000",
      ),
  }),
});

export type JunitUploadAnswer = z.infer<typeof junitUploadResponse>['data'];

/** `proctor-ci upload junit` reads this answer as reporter/src/api/wire.ts types it: a change on either side fails the type check. */
const wireAgrees: [z.output<typeof junitUploadResponse>] extends [WireAnswer]
  ? [WireAnswer['data']['counts']] extends [JunitUploadAnswer['counts']]
    ? true
    : false
  : false = true;
void wireAgrees;
