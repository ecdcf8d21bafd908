import type { Tx } from '../db.ts';

// What a pull (merge) request's comment reads of durations: each test the run passed, its duration
// there, and its passed durations in the newest runs of the base branch in the run's environment,
// and in the runs of its own branch (where a slowdown started).

export interface DurationAgainstBase {
  test_case_id: string;
  title: string;
  file_path: string;
  /** The run's passed duration, milliseconds. */
  duration_ms: number;
  /** The base branch's newest passed durations of the test (at most `history`), milliseconds. */
  history_ms: number[];
}

/**
 * The run's passed tests of at least `minMs` (a shorter one cannot have risen by that much) with
 * their history on `branch`: the environment's newest 200 ended runs of it before this run are
 * read, each test's results probed by the results' key (run, test).
 */
export async function durationsAgainstBranch(sql: Tx, runId: number, branch: string, history: number, minMs: number): Promise<DurationAgainstBase[]> {
  return sql<DurationAgainstBase[]>`
    with base_runs as materialized (
      select coalesce(array_agg(id), '{}') as ids from (
        select b.id from test_runs b join test_runs r on r.id = ${runId}
        where b.project_id = r.project_id and b.environment_id = r.environment_id and b.id < r.id and b.run_ended_at is not null
          and coalesce(b.build_branch, b.test_run_branch) = ${branch}
        order by b.id desc limit 200) newest
    )
    select t.test_case_id, coalesce(tc.name, t.test_case_id) as title, coalesce(tc.file_path, '') as file_path, t.duration as duration_ms, h.history_ms
    from test_results t
    join test_runs r on r.id = t.test_run_id
    left join test_cases tc on tc.project_id = r.project_id and tc.id = t.test_case_id
    cross join lateral (
      select coalesce(array_agg(x.duration), '{}') as history_ms from (
        select p.duration from test_results p
        where p.test_case_id = t.test_case_id and p.is_final and p.outcome = 'passed' and p.duration is not null
          and p.test_run_id = any((select ids from base_runs)::int[])
        order by p.test_run_id desc limit ${history}) x
    ) h
    where t.test_run_id = ${runId} and t.is_final and t.outcome = 'passed' and t.duration >= ${minMs}
    order by t.test_case_id`;
}

export interface BranchDuration {
  test_case_id: string;
  run_id: number;
  run_number: number;
  duration_ms: number;
}

/**
 * The tests' passed durations in the newest `limit` runs of the run's own branch in its environment,
 * up to the run itself, per test the newest run first.
 */
export async function durationsOnRequestBranch(sql: Tx, runId: number, testCaseIds: string[], limit: number): Promise<BranchDuration[]> {
  return sql<BranchDuration[]>`
    with branch_runs as materialized (
      select b.id, b.number from test_runs b join test_runs r on r.id = ${runId}
      where b.project_id = r.project_id and b.environment_id = r.environment_id and b.id <= r.id
        and coalesce(b.build_branch, b.test_run_branch) = coalesce(r.build_branch, r.test_run_branch)
        and (b.run_ended_at is not null or b.id = r.id)
      order by b.id desc limit ${limit}
    )
    select x.test_case_id, b.id as run_id, b.number as run_number, x.duration as duration_ms
    from branch_runs b
    join test_results x on x.test_run_id = b.id and x.test_case_id = any(${testCaseIds}::text[]) and x.is_final and x.outcome = 'passed' and x.duration is not null
    order by x.test_case_id, b.id desc`;
}
