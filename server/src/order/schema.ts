import { ORDER_REASONS, ORDER_STRATEGIES } from '@proctor/reporter/runs/order';
import type { TestOrderAnswer } from '@proctor/reporter/wire';
import { z } from 'zod';

export const orderStrategy = z.enum(ORDER_STRATEGIES).openapi({
  description:
    "How a run's units are handed out: `duration`, longest first (balance); `failures-first`, the units likeliest to fail on this build first (failed in the last run of the environment and branch, new, failure rate and flaky score over the window), then longest first",
});

export const testOrderQuery = z
  .object({
    environment: z.string().min(1).max(100).describe("the environment's slug"),
    branch: z.string().min(1).max(500).optional().describe("the build's branch: its last run's failures count (else the environment's mainline's)"),
    strategy: orderStrategy.optional().describe("the order to answer; the environment's own by default"),
  })
  .strict();

const orderedTest = z.object({
  id: z.string(),
  title: z.string(),
  file_path: z.string(),
  runner_project: z.string(),
  reasons: z.array(z.enum(ORDER_REASONS)).describe('why the test is likely to fail on this build, strongest first; empty for none'),
  risk_rank: z.number().int().nullable().describe('its place among the tests with a reason (1 first); null for a test with none'),
  failed_last_run: z.boolean(),
  failure_rate: z.number().describe("the share of the window's counted runs it failed in"),
  flaky_score: z.number(),
  duration_ms: z.number().nullable().describe('its mean duration in the environment'),
});

export const testOrderResponse = z.object({
  data: z.object({
    environment: z.string(),
    branch: z.string().nullable(),
    strategy: orderStrategy,
    last_run: z
      .object({ id: z.number().int(), number: z.number().int().nullable(), branch: z.string().nullable() })
      .nullable()
      .describe("the run whose failures count as the last run's (the branch's last ended run, else its mainline's); null: none"),
    changed_since: z
      .object({ run_id: z.number().int(), run_number: z.number().int(), commit: z.string() })
      .nullable()
      .describe(
        "the branch's last passing run with a known commit: `proctor-ci order` ranks a test whose file, or a file it imports, changed since that commit (Playwright's `--only-changed`) as `changed`; null: none, so no test is known changed",
      ),
    tests: z
      .array(orderedTest)
      .describe(
        'every test the environment ran, in the order asked; tests it never ran are new, and go after the last run failures (`proctor-ci order` adds them from its listing)',
      ),
  }),
});

/** `proctor-ci order` reads this answer as reporter/src/api/wire.ts types it: a change on either side fails the type check. */
const wireAgrees: [z.output<typeof testOrderResponse>] extends [TestOrderAnswer]
  ? [TestOrderAnswer] extends [z.output<typeof testOrderResponse>]
    ? true
    : false
  : false = true;
void wireAgrees;
