import type { Tx } from '../db.ts';

// Reads of the history the failures-first order ranks by: the last run's failures, the flakiness
// window's rates and the tests the environment has run (other features write them all).

export interface LastRun {
  id: number;
  number: number | null;
  branch: string | null;
}

/**
 * The last ended run of the environment on `branch`, else on its mainline: the branch most of its
 * last 200 ended runs were for (Proctor keeps no default branch of its own; the branch most runs are
 * for is the one the others branch from). A run that errored says nothing of its tests. Null: none.
 */
export async function lastRunOf(sql: Tx, projectId: number, environmentId: number, branch: string | null): Promise<LastRun | null> {
  const [row] = await sql<LastRun[]>`
    with ended as materialized (
      select id, number, coalesce(build_branch, test_run_branch) as branch from test_runs
      where project_id = ${projectId} and environment_id = ${environmentId} and run_ended_at is not null
        and state in ('passed', 'failed', 'cancelled')
      order by id desc limit 200
    ),
    mainline as (
      select branch from ended where branch is not null group by branch order by count(*) desc, max(id) desc limit 1
    )
    select id, number, branch from ended
    where branch = ${branch}::text or branch = (select branch from mainline)
    order by (branch = ${branch}::text) is true desc, id desc limit 1`;
  return row ?? null;
}

/** The tests that ended failed in the run. */
export async function failedTestsOf(sql: Tx, runId: number): Promise<Set<string>> {
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results where test_run_id = ${runId} and is_final and outcome = 'failed'`;
  return new Set(rows.map((row) => row.test_case_id));
}

export interface WindowRates {
  failure_rate: number;
  flaky_score: number;
}

/** Each test's failure rate and flaky score over the flakiness window (its kept 14 days); tests it has not counted are missing. */
export async function windowRates(sql: Tx, projectId: number, environmentId: number, testIds: string[] | null): Promise<Map<string, WindowRates>> {
  const rows = await sql<({ test_case_id: string } & WindowRates)[]>`
    select test_case_id, failed_runs::float8 / greatest(runs_counted, 1) as failure_rate, score as flaky_score from flakiness_window
    where project_id = ${projectId} and environment_id = ${environmentId}
      ${testIds ? sql`and test_case_id = any(${testIds}::text[])` : sql``}`;
  return new Map(rows.map((row) => [row.test_case_id, { failure_rate: row.failure_rate, flaky_score: row.flaky_score }]));
}

export interface KnownTest {
  id: string;
  title: string;
  file_path: string;
  runner_project: string;
}

/** The tests the environment has run (its latest cumulative day), with their names. */
export async function knownTests(sql: Tx, projectId: number, environmentId: number): Promise<KnownTest[]> {
  return sql<KnownTest[]>`
    select c.test_case_id as id, coalesce(tc.name, c.test_case_id) as title, coalesce(tc.file_path, '') as file_path, coalesce(tc.runner_project, '') as runner_project
    from test_case_cumulative c left join test_cases tc on tc.project_id = c.project_id and tc.id = c.test_case_id
    where c.project_id = ${projectId} and c.environment_id = ${environmentId} and c.total_runs > 0
      and c.day = (select max(day) from test_case_cumulative where project_id = ${projectId} and environment_id = ${environmentId})
    order by c.test_case_id`;
}

/** The environment's order strategy. */
export async function environmentOrderStrategy(sql: Tx, environmentId: number): Promise<string> {
  const [row] = await sql<{ order_strategy: string }[]>`select order_strategy from environments where id = ${environmentId}`;
  return row?.order_strategy ?? 'duration';
}
