import type { Tx } from '../db.ts';
import type { ComparedList, ComparedTest } from './schema.ts';

// Reads only: two runs' final results side by side.

export interface ComparedRow extends ComparedTest {
  list: ComparedList | 'duration_changes';
  total: number;
}

/** The two runs' final results joined by test: each test with its outcome and duration in both. */
function pairs(sql: Tx, runId: number, baseId: number) {
  return sql`
    pairs as (
      select coalesce(h.test_case_id, b.test_case_id) as test_case_id, h.outcome as status, b.outcome as base_status,
             h.total_duration as duration, b.total_duration as base_duration, h.final_error_message as error_message,
             h.failure_group_id
      from (select test_case_id, outcome, total_duration, final_error_message, failure_group_id
            from test_results where test_run_id = ${runId} and is_final) h
      full join (select test_case_id, outcome, total_duration from test_results where test_run_id = ${baseId} and is_final) b
        on b.test_case_id = h.test_case_id
    )`;
}

/** What a listed test is shown with: its title and place from the run that had it, its failure group's title. */
function presented(sql: Tx, projectId: number, runId: number, baseId: number) {
  return sql`
    select x.list, x.total, x.test_case_id, coalesce(t.title, bt.title, x.test_case_id) as title,
           coalesce(t.file_path, bt.file_path, '') as file_path, coalesce(t.runner_project, bt.runner_project, '') as runner_project,
           x.status, x.base_status, x.duration, x.base_duration, x.error_message, x.failure_group_id, g.title as failure_group_title
    from listed x
    left join test_run_tests t on t.test_run_id = ${runId} and t.test_case_id = x.test_case_id
    left join test_run_tests bt on t.test_case_id is null and bt.test_run_id = ${baseId} and bt.test_case_id = x.test_case_id
    left join failure_groups g on x.failure_group_id is not null and g.project_id = ${projectId} and g.id = x.failure_group_id`;
}

/**
 * The tests of each list (new failures, fixed, still failing, added, removed, flaky), at most
 * `limit` a list, with each list's total; a test may be in several.
 */
export async function comparedLists(sql: Tx, projectId: number, runId: number, baseId: number, limit: number): Promise<ComparedRow[]> {
  return sql<ComparedRow[]>`
    with ${pairs(sql, runId, baseId)},
    kinds as (
      select p.*, k.list from pairs p
      cross join lateral (values
        (case when p.status = 'failed' and p.base_status is distinct from 'failed' then 'new_failures' end),
        (case when p.base_status = 'failed' and p.status in ('passed', 'flaky') then 'fixed' end),
        (case when p.status = 'failed' and p.base_status = 'failed' then 'still_failing' end),
        (case when p.base_status is null then 'added' end),
        (case when p.status is null then 'removed' end),
        (case when p.status = 'flaky' or p.base_status = 'flaky' then 'flaky' end)
      ) as k (list)
      where k.list is not null
    ),
    listed as (
      select * from (
        select kinds.*, row_number() over (partition by list order by test_case_id) as position, count(*) over (partition by list)::int as total
        from kinds) ranked
      where position <= ${limit}
    )
    ${presented(sql, projectId, runId, baseId)}
    order by x.list, file_path, title, runner_project`;
}

/** The tests that passed (or were flaky) in both runs whose duration changed most, either way. */
export async function durationChanges(sql: Tx, projectId: number, runId: number, baseId: number, limit: number): Promise<ComparedRow[]> {
  return sql<ComparedRow[]>`
    with ${pairs(sql, runId, baseId)},
    listed as (
      select p.*, 'duration_changes' as list, count(*) over ()::int as total
      from pairs p
      where p.status in ('passed', 'flaky') and p.base_status in ('passed', 'flaky') and p.duration <> p.base_duration
      order by abs(p.duration - p.base_duration) desc, p.test_case_id
      limit ${limit}
    )
    ${presented(sql, projectId, runId, baseId)}
    order by abs(x.duration - x.base_duration) desc, x.test_case_id`;
}

/** One run of a test: where and on what it ran, how it ended, and its failure's group. */
export interface TimelineRow {
  test_run_id: number;
  test_run_number: number;
  environment_id: number;
  environment_name: string;
  branch: string | null;
  commit: string | null;
  run_at: Date;
  outcome: 'passed' | 'failed' | 'flaky' | 'skipped';
  failure_group_id: string | null;
  failure_group_title: string | null;
}

/**
 * The test's final results in the project's last `runs` runs, across environments and branches,
 * newest first: each run's result is found by its primary key (results are kept by run).
 */
export async function testTimeline(sql: Tx, projectId: number, testCaseId: string, runs: number): Promise<TimelineRow[]> {
  return sql<TimelineRow[]>`
    select h.test_run_id, r.number as test_run_number, r.environment_id, e.name as environment_name, r.test_run_branch as branch,
           coalesce(r.test_run_head_sha, r."commit") as "commit", coalesce(r.run_ended_at, r.created_at) as run_at, h.outcome,
           h.failure_group_id, g.title as failure_group_title
    from (select id, number, environment_id, test_run_branch, test_run_head_sha, "commit", run_ended_at, created_at from test_runs
          where project_id = ${projectId} and details_deleted_at is null order by id desc limit ${runs}) r
    join test_results h on h.test_run_id = r.id and h.test_case_id = ${testCaseId} and h.is_final
    join environments e on e.id = r.environment_id
    left join failure_groups g on h.failure_group_id is not null and g.project_id = ${projectId} and g.id = h.failure_group_id
    order by r.id desc`;
}
