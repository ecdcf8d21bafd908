import { z } from 'zod';
import type * as AgentWire from '@proctor/reporter/agent';
import { WIRE_LIMITS as LIMIT } from '@proctor/reporter/wire';
import { bodyId, MAX_INT4, positiveId, runnerTestId } from '../http/fields.ts';
import { RUN_STATES } from '../states.ts';

/** Units of one run: each is reported as the run's shard of its number. */
export const MAX_UNITS = LIMIT.shards;
/** A `--test-list` line: `[project] › file › titles`. */
const MAX_LINE = 5000;
const MAX_TESTS_PER_UNIT = 20_000;

/** The run of a CI build that its agents share: made by the first, found by the others through run_key. */
export const agentRunSchema = z
  .object({
    environment: z.string().min(1),
    run_key: z.string().min(1).max(LIMIT.runKey),
    branch: z.string().max(LIMIT.branch).nullable().default(null),
    commit: z.string().max(LIMIT.commit).nullable().default(null),
    build_url: z.string().max(LIMIT.url).nullable().default(null),
    pull_request: z.number().int().min(1).max(MAX_INT4).nullable().default(null).describe('the pull or merge request the CI build is for'),
    max_failures: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .nullable()
      .default(null)
      .describe("fail fast: the run stops once this many tests failed that no snooze covers (null: the environment's limit); the first agent's makes the run"),
  })
  .strict()
  .openapi('AgentRun');

export const joinSchema = z
  .object({
    name: z.string().min(1).max(200).describe('how the agent is shown: its host name, a CI job'),
  })
  .strict()
  .openapi('AgentJoin');

const checkoutSchema = z
  .object({
    repo_url: z.string().nullable().describe("null when the project has no test repository: agents run in the CI job's own checkout (--workspace)"),
    branch: z.string().nullable(),
    commit: z.string().nullable().describe("the commit every agent checks out: the first agent's, once it planned the units"),
    tags: z.array(z.string()),
    test_case_ids: z.array(z.string()),
    runner_projects_match: z.array(z.string()),
    runner_projects_ignore: z.array(z.string()),
    env_files: z.array(z.string()),
    build_url: z.string().nullable().describe("the deployed build's URL a trigger gave (build.url): the tests' BASE_URL and PLAYWRIGHT_BASE_URL"),
    environment_variables_overrides: z.array(z.object({ name: z.string(), value: z.string() })),
    playwright_args: z
      .array(z.string())
      .describe("the environment's Playwright arguments, which every unit gets before the agent's own (`proctor-ci agent … -- <arguments>`)"),
  })
  .openapi('AgentCheckout');

export const joinResponse = z.object({
  data: z.object({
    agent: z.object({
      id: z.number().int(),
      name: z.string(),
      index: z.number().int().describe("the agent's place in the run's join order, 0 for the first: its units' PROCTOR_AGENT_INDEX"),
      joined: z.number().int().describe('agents of the run joined so far, this one included'),
    }),
    test_run: z.object({ id: z.number().int(), state: z.enum(RUN_STATES), planned: z.boolean() }),
    checkout: checkoutSchema,
    reporter_key: z.string().describe("a key scoped to this run, for the tests' reporter: the only credential the test process gets"),
    changed_since: z
      .string()
      .nullable()
      .describe(
        "failures first: the commit of the last passing run on the run's branch, for the planning agent to list the tests changed since (`changed_test_ids`); null for a `duration` environment or without such a run",
      ),
    agent_token: z
      .string()
      .describe("this agent's own token, for its plan, leases and heartbeats (no other agent's) and its run's results; it ends with the run"),
    lease_seconds: z.number().int(),
  }),
});

const plannedUnitSchema = z
  .object({
    // A config without projects has one named '' (Playwright's own default).
    runner_project: z.string().max(LIMIT.runnerProject),
    file: z.string().min(1).max(LIMIT.title),
    tests: z
      .array(z.object({ id: runnerTestId, line: z.string().min(1).max(MAX_LINE) }).strict())
      .min(1)
      .max(MAX_TESTS_PER_UNIT),
  })
  .strict();

export const planSchema = z
  .object({
    agent_id: bodyId.describe('the agent whose checkout was listed'),
    commit: z.string().max(LIMIT.commit).nullable().default(null).describe("the checkout's commit: the run's, unless the CI named one"),
    branch: z.string().max(LIMIT.branch).nullable().default(null).describe("the checkout's branch: the run's, unless the CI named one"),
    units: z.array(plannedUnitSchema).max(MAX_UNITS),
    changed_test_ids: z
      .array(runnerTestId)
      .max(MAX_UNITS * 10)
      .nullable()
      .default(null)
      .describe(
        "failures first: the tests whose files changed since the join answer's `changed_since` commit, as the checkout's Playwright (`--only-changed`) lists them; null when not known",
      ),
    error: z
      .string()
      .min(1)
      .max(LIMIT.errorMessage)
      .nullable()
      .default(null)
      .describe('the agent to plan the run could not (its checkout, dependencies or listing failed): the run ends `error` with this reason'),
  })
  .strict()
  .openapi('AgentPlan');

export const planResponse = z.object({
  data: z.object({
    planned: z.boolean().describe('false when another agent planned the run first: its units stand'),
    units: z.number().int(),
  }),
});

export const agentBodySchema = z.object({ agent_id: bodyId }).strict().openapi('AgentRef');

/** The longest a batch of units may be asked for: an hour of estimated work. */
const MAX_BATCH_MS = 3_600_000;

export const leaseSchema = z
  .object({
    agent_id: bodyId,
    budget_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_BATCH_MS)
      .nullable()
      .default(null)
      .describe(
        "lease several units at once, to run in one Playwright: their estimates summing to at most this, and to no more than the agent's part of the free work shared out over the run's agents by the work each has left; null: one unit",
      ),
  })
  .strict()
  .openapi('AgentLease');

export const unitSchema = z
  .object({
    unit: z.number().int().describe("reported as the run's shard of this number"),
    runner_project: z.string(),
    file: z.string(),
    tests: z.array(z.string()).describe('`--test-list` lines'),
    test_ids: z.array(z.string()),
    estimate_ms: z.number().int().nullable(),
  })
  .openapi('AgentUnit');

export const leaseResponse = z.object({
  data: z.object({
    unit: unitSchema.nullable().describe('null when no unit is free now; the first of `units`'),
    units: z
      .array(unitSchema)
      .describe('every unit leased by this request (one unless `budget_ms` asked for more), all of one runner project, each reported and ended on its own'),
    remaining: z.number().int().describe('units not ended yet, this one included; 0 once planned: the run has no work left'),
    test_run: z.object({ state: z.enum(RUN_STATES), planned: z.boolean() }),
    plan: z.boolean().describe('the run is not planned yet and this agent is to plan it (the first agent still heard from); the others wait for its plan'),
  }),
});

export const heartbeatResponse = z.object({
  data: z.object({
    test_run: z.object({ state: z.enum(RUN_STATES) }),
    leased_units: z.array(z.number().int()).describe("the agent's units whose leases were extended; one missing was given to another agent"),
  }),
});

export const runStateResponse = z.object({
  data: z.object({
    test_run: z.object({
      state: z.enum(RUN_STATES),
      cancelled_by: z.string().nullable().describe('who cancelled the run: `max_failures` when fail fast stopped it; null while it runs'),
    }),
  }),
});

export const agentParams = z.object({ id: positiveId, agent: positiveId }).strict();
export const unitParams = z.object({ id: positiveId, unit: positiveId }).strict();

export const crashSchema = z
  .object({
    agent_id: bodyId,
    error: z.string().min(1).max(LIMIT.errorMessage).describe("why the unit crashed: Playwright's exit and the end of its output"),
  })
  .strict()
  .openapi('AgentUnitCrash');

export const crashResponse = z.object({
  data: z.object({
    retried: z
      .boolean()
      .describe("true: the unit's first crash, it goes to another agent; false: it crashed again (its shard ended `crashed`) or had ended already"),
  }),
});

export type AgentRunBody = z.infer<typeof agentRunSchema>;
export type Plan = z.infer<typeof planSchema>;
export type PlannedUnit = z.infer<typeof plannedUnitSchema>;
export type Unit = z.infer<typeof unitSchema>;
export type Checkout = z.infer<typeof checkoutSchema>;

/**
 * The agent (reporter/src/agent, run by `proctor-ci agent` and `proctor agent`) reads and sends
 * these shapes: what it sends must pass the schemas, what it reads must be in the answers. A change
 * on either side fails the type check.
 */
type Sends<Schema extends z.ZodType, Wire> = [Wire] extends [z.input<Schema>] ? true : false;
type Reads<Answer, Wire> = [Answer] extends [Wire] ? true : false;
const agentWireAgrees: [
  Sends<typeof agentRunSchema, AgentWire.AgentRunBody>,
  Sends<
    typeof planSchema,
    {
      agent_id: number;
      commit: string | null;
      branch: string | null;
      units: AgentWire.PlannedUnit[];
      changed_test_ids?: string[] | null;
      error?: string | null;
    }
  >,
  Sends<typeof crashSchema, { agent_id: number; error: string }>,
  Sends<typeof leaseSchema, { agent_id: number; budget_ms?: number | null }>,
  Reads<z.output<typeof joinResponse>['data'], AgentWire.JoinAnswer>,
  Reads<z.output<typeof leaseResponse>['data'], AgentWire.LeaseAnswer>,
  Reads<Unit, AgentWire.Unit>,
  Reads<Checkout, AgentWire.Checkout>,
  Reads<z.output<typeof runStateResponse>['data'], AgentWire.RunStateAnswer>,
] = [true, true, true, true, true, true, true, true, true];
void agentWireAgrees;
