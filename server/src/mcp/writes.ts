import type { AppDeps } from '../context.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { updateGroup } from '../failuregroups/index.ts';
import { type Role, roleAllows, roleOf, type Scope } from '../principals.ts';
import { getRunById, triggerRun, triggerSchema } from '../runs/index.ts';
import { snoozeTests } from '../snoozes/index.ts';
import { getTestCase } from '../testcases/index.ts';

// What an assistant may change through MCP, by the role of its key, as the API's own calls would:
// the same checks, the same audit trail.

type Deps = Pick<AppDeps, 'sql' | 'clock' | 'branches'>;

/** A tool that changes something needs the role the API's call does; a refusal names the tool and the role. */
export function requireRoleFor(scope: Scope, tool: string, needed: Role): void {
  const role = roleOf(scope.principal);
  if (role === null || !roleAllows(role, needed)) throw new ForbiddenError(`${tool} needs the role ${needed}; this key's role is ${role ?? 'none'}`);
}

export async function snoozeTest(
  deps: Deps,
  scope: Scope,
  input: { test_case_id: string; until: string; reason: string; environment_id?: number; run_id?: number },
) {
  requireRoleFor(scope, 'snooze_test', 'member');
  if (!(await getTestCase(deps.sql, scope.projectId, input.test_case_id))) throw new NotFoundError(`test_case_id: test ${input.test_case_id} not found`);
  const snooze = await snoozeTests(
    deps.sql,
    scope,
    {
      testIds: [input.test_case_id],
      until: new Date(input.until),
      description: input.reason,
      environmentId: input.environment_id ?? null,
      createdFromRunId: input.run_id ?? null,
    },
    deps.clock(),
    { until: 'until', environment: 'environment_id', run: 'run_id' },
  );
  return {
    snooze: {
      id: snooze.id,
      test_ids: snooze.test_ids,
      until: snooze.snooze_until.toISOString(),
      environment_id: snooze.scoped_to_environment_id,
      reason: snooze.description,
    },
  };
}

export async function rerunFailed(deps: Deps, scope: Scope, input: { run_id: number }) {
  requireRoleFor(scope, 'rerun_failed', 'member');
  const source = await getRunById(deps.sql, input.run_id);
  if (!source || source.project_id !== scope.projectId) throw new NotFoundError(`run_id: test run ${input.run_id} not found`);
  const body = triggerSchema.parse({ environment: source.environment_slug, rerun_source_id: source.id, rerun_only_failed: true });
  const run = await triggerRun(deps.sql, deps.branches, scope, body, deps.clock());
  return { test_run: { id: run.id, state: run.state, rerun_of: source.id } };
}

export async function setFailureGroupStatus(deps: Deps, scope: Scope, input: { failure_group_id: string; status: 'open' | 'resolved' | 'ignored' }) {
  requireRoleFor(scope, 'set_failure_group_status', 'member');
  const group = await updateGroup(deps.sql, scope.projectId, input.failure_group_id, { status: input.status }, deps.clock());
  return { failure_group: { id: group.id, title: group.title, status: group.status } };
}
