import type { Tx } from '../db.ts';
import type { RerunTest, RunSelection } from './schema.ts';

// Affected runs' SQL: the base a run's changes are measured from, the tests to run again, and the
// selection a run used (test_runs.affected and test_runs.selection, migration 060).

export interface BaseRun {
  run_id: number;
  run_number: number;
  commit: string;
}

/**
 * The environment's last passing run on the branch that knows the commit it ran (before `beforeRunId`,
 * the asking run, when given). A passing run may hold snoozed failures: they are run again.
 */
export async function lastPassingRun(sql: Tx, environmentId: number, branch: string, beforeRunId: number | null): Promise<BaseRun | null> {
  const [row] = await sql<BaseRun[]>`
    select id as run_id, number as run_number, test_run_head_sha as "commit" from test_runs
    where environment_id = ${environmentId} and test_run_branch = ${branch} and state = 'passed' and test_run_head_sha is not null
      and (${beforeRunId}::int is null or id < ${beforeRunId}::int)
    order by id desc limit 1`;
  return row ?? null;
}

/** Tests that failed or were flaky (finally) in the base run or any run of the environment on the branch after it. */
export async function testsToRunAgain(sql: Tx, environmentId: number, branch: string, fromRunId: number, beforeRunId: number | null): Promise<RerunTest[]> {
  return sql<RerunTest[]>`
    select distinct on (r.test_case_id) r.test_case_id, t.title, t.file_path, t.runner_project, r.outcome as status, x.id as run_id
    from test_runs x
    join test_results r on r.test_run_id = x.id and r.is_final and r.outcome in ('failed', 'flaky')
    join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
    where x.environment_id = ${environmentId} and x.test_run_branch = ${branch} and x.id >= ${fromRunId}
      and (${beforeRunId}::int is null or x.id < ${beforeRunId}::int)
    order by r.test_case_id, x.id desc
    limit 10000`;
}

/**
 * How many runs of the environment on the branch ran affected since its last full run (one that
 * ended passed or failed without leaving a test out: no selection, or `all`).
 */
export async function affectedRunsInARow(sql: Tx, environmentId: number, branch: string, beforeRunId: number | null): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    with runs as (
      select id, state, selection from test_runs
      where environment_id = ${environmentId} and test_run_branch = ${branch} and (${beforeRunId}::int is null or id < ${beforeRunId}::int)
    )
    select count(*)::int as n from runs
    where selection->>'mode' = 'affected'
      and id > coalesce((select max(id) from runs where state in ('passed', 'failed') and coalesce(selection->>'mode', 'all') = 'all'), 0)`;
  return row?.n ?? 0;
}

/** Whether a run was made with `affected`, and its environment's `full_run_every`. */
export async function affectedAsked(sql: Tx, runId: number): Promise<{ affected: boolean; full_run_every: number | null }> {
  const [row] = await sql<{ affected: boolean; full_run_every: number | null }[]>`
    select r.affected, e.full_run_every from test_runs r join environments e on e.id = r.environment_id where r.id = ${runId}`;
  return row ?? { affected: false, full_run_every: null };
}

export async function recordSelection(sql: Tx, runId: number, selection: RunSelection): Promise<void> {
  await sql`update test_runs set selection = ${sql.json(selection)} where id = ${runId}`;
}
