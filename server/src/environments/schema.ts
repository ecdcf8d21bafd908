import { Cron } from 'croner';
import { PLAYWRIGHT_ARGS_LIMITS, playwrightArgsProblem } from '@proctor/reporter/toolchain/playwright-args';
import { ORDER_STRATEGIES } from '@proctor/reporter/runs/order';
import { z } from 'zod';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

function isCron(expression: string): boolean {
  try {
    new Cron(expression, { paused: true });
    return true;
  } catch {
    return false;
  }
}

const name = z.string().min(1).max(200);
const slug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be URL-friendly: letters, digits, ".", "_" or "-", starting with a letter or digit');
/** What an environment's slug may be, wherever one is made. */
export const environmentSlug = slug;
const runnerProjectsMatch = z.array(
  z
    .string()
    .min(1)
    .refine((item) => !item.startsWith('!'), 'must not start with "!"; put ignored projects in runner_projects_ignore'),
);
const runnerProjectsIgnore = z.array(z.string().min(1));
const scheduledTrigger = z.string().refine(isCron, 'must be a valid cron expression, such as "0 6 * * 1-5"').nullable();

/** How a run's units are handed out (issue 56): reporter/src/runs/order.ts. */
const orderStrategy = z.enum(ORDER_STRATEGIES).openapi({
  description:
    "How the environment's runs hand their units out (to agents, the server's among them): `duration`, longest first; `failures-first`, the likeliest to fail on the build first (failed in the last run of the branch, new, failure rate and flaky score), then longest first",
});

const burnInRepeats = z.number().int().min(0).max(100);
/** Fail fast: a run stops after this many failures; null for no limit. */
const maxFailures = z.number().int().min(1).max(100_000).nullable();
/** Affected runs: every N-th affected run in a row runs every test; null: never forced. */
const fullRunEvery = z.number().int().min(1).max(10_000).nullable();
/** Options only, each one a unit may get: the same check as `proctor-ci agent … -- <arguments>`. */
const playwrightArgs = z
  .array(z.string().min(1).max(PLAYWRIGHT_ARGS_LIMITS.length))
  .max(PLAYWRIGHT_ARGS_LIMITS.count)
  .superRefine((args, ctx) => {
    const problem = playwrightArgsProblem(args);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .openapi({
    description:
      "Playwright arguments of every run Proctor executes in the environment (its shards, or its agents' units before their own): `--config`, `--project`, `--workers`, `--grep`, `--retries`, `--timeout`, …; test file filters, `--shard`, `--test-list`, `--list`, `--last-failed`, `--only-changed`, `--ui`, `--debug`, `--reporter`, `--output` and `--repeat-each` are refused",
    example: ['--config=playwright.ci.config.ts', '--workers=2'],
  });

export const environmentSchema = z
  .object({
    id: z.number().int(),
    project_id: z.number().int(),
    slug: z.string(),
    name: z.string(),
    runner_projects_match: z.array(z.string()),
    runner_projects_ignore: z.array(z.string()),
    is_disabled: z.boolean().nullable(),
    env_files: z.array(z.string()),
    runner_projects: z.array(z.string()).describe('the runner projects the last sync found in the test repository'),
    scheduled_trigger: z.string().nullable(),
    burn_in_repeats: z.number().int().openapi({ description: 'A test seen for the first time in a triggered run is repeated this many times in it (0: off)' }),
    playwright_args: z.array(z.string()).openapi({ description: 'Playwright arguments of every run Proctor executes in the environment' }),
    order_strategy: orderStrategy,
    max_failures: z.number().int().nullable().openapi({
      description:
        "A run stops (cancelled, naming the failures) once this many of its tests failed that no snooze covers; the default of the environment's runs; null: no limit",
    }),
    full_run_every: z.number().int().nullable().openapi({
      description:
        'Affected runs (`affected: true`): after this many affected runs in a row on a branch, the next runs every test, its selection saying so; null: never forced',
    }),
    created_at: z.iso.datetime().nullable(),
    updated_at: z.iso.datetime().nullable(),
  })
  .openapi('Environment');

export const createEnvironmentSchema = z
  .object({
    name,
    slug,
    runner_projects_match: runnerProjectsMatch.default([]),
    runner_projects_ignore: runnerProjectsIgnore.default([]),
    scheduled_trigger: scheduledTrigger.default(null),
    burn_in_repeats: burnInRepeats.default(0),
    playwright_args: playwrightArgs.default([]),
    max_failures: maxFailures.default(null),
    order_strategy: orderStrategy.default('duration'),
    full_run_every: fullRunEvery.optional(),
  })
  .strict()
  .openapi('CreateEnvironment');

export const updateEnvironmentSchema = z
  .object({
    name: name.optional(),
    slug: slug.optional(),
    is_disabled: z.boolean().optional(),
    runner_projects_match: runnerProjectsMatch.optional(),
    runner_projects_ignore: runnerProjectsIgnore.optional(),
    scheduled_trigger: scheduledTrigger.optional(),
    burn_in_repeats: burnInRepeats.optional(),
    playwright_args: playwrightArgs.optional(),
    max_failures: maxFailures.optional(),
    order_strategy: orderStrategy.optional(),
    full_run_every: fullRunEvery.optional(),
  })
  .strict()
  .openapi('UpdateEnvironment');

export { idParams as environmentParams } from '../http/fields.ts';
export const environmentListQuery = z.object(paginationQuery(20, 100)).strict();
export const environmentListResponse = z.object({
  data: z.object({ environments: z.array(environmentSchema) }),
  pagination,
});

export type Environment = z.infer<typeof environmentSchema>;
export type CreateEnvironment = z.infer<typeof createEnvironmentSchema>;
export type UpdateEnvironment = z.infer<typeof updateEnvironmentSchema>;
