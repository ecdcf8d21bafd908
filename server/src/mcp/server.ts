import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AppDeps } from '../context.ts';
import { DomainError } from '../errors.ts';
import type { Scope } from '../principals.ts';
import { getRunById, previousRun } from '../runs/index.ts';
import * as reads from './reads.ts';
import { PROMPT_ARGS, TOOL_INPUTS } from './schema.ts';
import { runMarkdown } from './summary.ts';
import * as writes from './writes.ts';

/** The longest answer a tool gives, in characters of JSON: an assistant's context is not a dump. */
export const ANSWER_LIMIT = 100_000;

type Answer = { content: { type: 'text'; text: string }[]; isError?: boolean };

/** A tool's answer as JSON text; a domain refusal (not found, not allowed) as an error the assistant reads. */
async function answer(work: () => Promise<unknown>): Promise<Answer> {
  try {
    const text = JSON.stringify(await work(), null, 1);
    if (text.length > ANSWER_LIMIT)
      return { isError: true, content: [{ type: 'text', text: `the answer is over ${ANSWER_LIMIT} characters: ask for a smaller page` }] };
    return { content: [{ type: 'text', text }] };
  } catch (error) {
    if (error instanceof DomainError) return { isError: true, content: [{ type: 'text', text: error.message }] };
    throw error;
  }
}

/** Proctor's runs, tests, flaky tests and failure groups for one key's project, as MCP tools, a resource and a prompt. */
export function proctorMcpServer(deps: AppDeps, scope: Scope, version: string): McpServer {
  const server = new McpServer({ name: 'proctor', version }, { instructions: "Proctor's Playwright runs, failures and flaky tests of one project." });
  const { projectId } = scope;
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  server.registerTool(
    'list_runs',
    {
      description:
        "The project's runs, newest first, by environment (slug), branch, state, since a time and owner (runs with a failed or flaky test of theirs)",
      inputSchema: TOOL_INPUTS.list_runs,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readRuns(deps, projectId, input)),
  );
  server.registerTool(
    'get_run',
    {
      description: `A run's counts and its failures, ${reads.FAILURES_PER_PAGE} a page (failed, then flaky): title, runner project, owners, error, where it failed, failure group, new or still failing against the previous run, screenshot and trace links`,
      inputSchema: TOOL_INPUTS.get_run,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readRun(deps, projectId, input)),
  );
  server.registerTool(
    'get_test',
    {
      description:
        'A test: per environment and branch, its last pass and first failure (with their commits) and the runs it failed since; its recent outcomes, failure groups, flaky score and class, snoozes',
      inputSchema: TOOL_INPUTS.get_test,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readTest(deps, projectId, input)),
  );
  server.registerTool(
    'search_tests',
    {
      description: 'Tests found by a part of their title, file or suites, or by a tag (@smoke), or by their owner (@org/team), with their owners',
      inputSchema: TOOL_INPUTS.search_tests,
      annotations: readOnly,
    },
    (input) => answer(() => reads.searchTests(deps, projectId, input)),
  );
  server.registerTool(
    'list_flaky_tests',
    {
      description:
        "Tests ranked by flakiness score over the last 14 days, per environment, with their class, owners and whether they are quarantined; one owner's alone with owner",
      inputSchema: TOOL_INPUTS.list_flaky_tests,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readFlakyTests(deps, projectId, input)),
  );
  server.registerTool(
    'get_digest',
    {
      description:
        "An environment's digest of the last day or week: runs and pass rate against the period before, tests that turned flaky or broken, the flakiest, most failing and slowest tests, and the largest rises of duration and flakiness against the look-back before the period",
      inputSchema: TOOL_INPUTS.get_digest,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readDigest(deps, projectId, input)),
  );
  server.registerTool(
    'list_failure_groups',
    {
      description: "Failure groups (failures of one kind across tests and runs), most recently seen first, each with its tests' owners; by owner",
      inputSchema: TOOL_INPUTS.list_failure_groups,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readFailureGroups(deps, projectId, input)),
  );
  server.registerTool(
    'get_failure_group',
    {
      description: 'A failure group: its title, status, diagnosis, linked tracker issue (its state) and tests',
      inputSchema: TOOL_INPUTS.get_failure_group,
      annotations: readOnly,
    },
    (input) => answer(() => reads.readFailureGroup(deps, projectId, input)),
  );
  server.registerTool(
    'compare_runs',
    {
      description:
        'What changed from another run (by default the previous run of the same environment and branch) to this one: new failures, fixed, still failing, added, removed, flaky, duration changes; 50 tests a list at most',
      inputSchema: TOOL_INPUTS.compare_runs,
      annotations: readOnly,
    },
    (input) =>
      answer(async () => {
        const run = await getRunById(deps.sql, input.run_id);
        const other = input.other_run_id ?? (run && run.project_id === projectId ? ((await previousRun(deps.sql, run))?.id ?? null) : null);
        if (other === null || other === undefined) throw new reads.NoEarlierRun(input.run_id);
        return reads.readComparison(deps, projectId, { run_id: input.run_id, other_run_id: other });
      }),
  );

  server.registerTool(
    'snooze_test',
    {
      description: 'Snooze a test until a time, in one environment or all, with the reason: its failures stop failing runs (needs the member role)',
      inputSchema: TOOL_INPUTS.snooze_test,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (input) => answer(() => writes.snoozeTest(deps, scope, input)),
  );
  server.registerTool(
    'rerun_failed',
    {
      description: "Trigger a run of a run's failed tests again, in its environment (needs the member role)",
      inputSchema: TOOL_INPUTS.rerun_failed,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (input) => answer(() => writes.rerunFailed(deps, scope, input)),
  );
  server.registerTool(
    'set_failure_group_status',
    {
      description: 'Set a failure group open, resolved or ignored (needs the member role)',
      inputSchema: TOOL_INPUTS.set_failure_group_status,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (input) => answer(() => writes.setFailureGroupStatus(deps, scope, input)),
  );

  server.registerResource(
    'run',
    new ResourceTemplate('proctor://runs/{id}', { list: undefined }),
    { title: 'A run as Markdown', description: 'Counts and the first failures with their errors', mimeType: 'text/markdown' },
    async (uri, variables) => {
      const runId = Number(variables.id);
      if (!Number.isInteger(runId) || runId < 1) throw new Error(`${uri.href}: not a run's address`);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: runMarkdown(await reads.readRun(deps, projectId, { run_id: runId, page: 1 })) }] };
    },
  );

  server.registerPrompt(
    'triage_run',
    { description: "Walk through a run's failures: what each is, whether it is new, and what to do", argsSchema: PROMPT_ARGS.triage_run },
    ({ run_id: runId }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: [
              `Triage the Proctor run of id ${runId}.`,
              `1. Call get_run with run_id ${runId} (and its next pages) to read its failures.`,
              '2. For each failure, say whether it is new or still failing against the previous run; call compare_runs for what else changed.',
              '3. For a failure that is still failing or flaky, call get_test for when it started failing (its last pass and first failure, with their commits) and its flaky score.',
              '4. Group failures by their failure group; call get_failure_group for one that holds several tests.',
              '5. For each group, say the likely cause from the error and where it failed, and what to change: the test, the product, or the environment.',
              '6. Suggest snooze_test only for a known flaky test with a reason and an end date, and rerun_failed only when the failures look like the environment, not the code.',
            ].join('\n'),
          },
        },
      ],
    }),
  );
  return server;
}
