import type { Tx } from '../db.ts';

// What the trackers read of a run and of a link's subject: the outcomes that move the links, and
// the history an issue's text tells. Reads of the runs', groups' and flakiness's tables only.

export interface FollowedRun {
  id: number;
  number: number;
  project_id: number;
  environment_id: number;
  branch: string | null;
  state: string;
}

export async function followedRun(sql: Tx, runId: number): Promise<FollowedRun | null> {
  const [row] = await sql<FollowedRun[]>`
    select id, number, project_id, environment_id, coalesce(build_branch, test_run_branch) as branch, state from test_runs where id = ${runId}`;
  return row ?? null;
}

/** The failure groups the run saw that no earlier run of its branch saw: new on that branch. */
export async function groupsNewOnBranch(sql: Tx, run: FollowedRun): Promise<string[]> {
  const rows = await sql<{ group_id: string }[]>`
    select distinct e.group_id from failure_group_events e
    where e.project_id = ${run.project_id} and e.test_run_id = ${run.id} and e.kind in ('attach', 'sighting')
      and not exists (
        select 1 from failure_group_events b join test_runs r on r.id = b.test_run_id
        where b.project_id = ${run.project_id} and b.group_id = e.group_id and b.test_run_id < ${run.id}
          and coalesce(r.build_branch, r.test_run_branch) is not distinct from ${run.branch})
    order by e.group_id`;
  return rows.map((row) => row.group_id);
}

/** The run's flaky tests whose class over the flakiness window (the run counted) is `flaky` in its environment. */
export async function testsTurnedFlaky(sql: Tx, run: FollowedRun): Promise<string[]> {
  const rows = await sql<{ test_case_id: string }[]>`
    select t.test_case_id from test_results t
    join flakiness_window w on w.project_id = ${run.project_id} and w.environment_id = ${run.environment_id} and w.test_case_id = t.test_case_id
    where t.test_run_id = ${run.id} and t.is_final and t.outcome = 'flaky' and w.class = 'flaky'
    order by t.test_case_id`;
  return rows.map((row) => row.test_case_id);
}

/**
 * The run's failed tests that turned broken with it: their final results in the environment's runs
 * of the run's branch, up to it, end in exactly `failures` failures in a row (neither passed nor
 * flaky between; skipped results are not counted), so a streak is counted once, at the run that
 * makes it that long. Only the branch's newest 200 ended runs of the environment are read, each
 * test's results probed by the results' key (run, test).
 */
export async function testsTurnedBroken(sql: Tx, run: FollowedRun, failures: number): Promise<string[]> {
  const rows = await sql<{ test_case_id: string }[]>`
    with branch_runs as materialized (
      select coalesce(array_agg(id), '{}') as ids from (
        select id from test_runs
        where project_id = ${run.project_id} and environment_id = ${run.environment_id} and id <= ${run.id} and state in ('passed', 'failed')
          and coalesce(build_branch, test_run_branch) is not distinct from ${run.branch}
        order by id desc limit 200) r
    )
    select t.test_case_id from test_results t
    cross join lateral (
      select count(*) filter (where x.outcome = 'failed' and x.place <= ${failures})::int as failed, count(*) filter (where x.place = ${failures + 1} and x.outcome = 'failed')::int as before
      from (
        select h.outcome, row_number() over (order by h.test_run_id desc) as place from test_results h
        where h.test_case_id = t.test_case_id and h.is_final and h.outcome in ('passed', 'failed', 'flaky')
          and h.test_run_id = any((select ids from branch_runs)::int[])
        order by h.test_run_id desc limit ${failures + 1}
      ) x
    ) streak
    where t.test_run_id = ${run.id} and t.is_final and t.outcome = 'failed' and streak.failed = ${failures} and streak.before = 0
    order by t.test_case_id`;
  return rows.map((row) => row.test_case_id);
}

/** How each subject fared in the run: the groups it saw fail, and its tests' final outcomes. */
export interface RunOutcomes {
  failedGroups: Set<string>;
  /** Groups whose tests (any that was ever a member) ran in the run and passed. */
  passedGroups: Set<string>;
  tests: Map<string, string>;
}

export async function outcomesOfRun(sql: Tx, run: FollowedRun, groupIds: string[]): Promise<RunOutcomes> {
  const results = await sql<{ test_case_id: string; outcome: string }[]>`
    select test_case_id, outcome from test_results where test_run_id = ${run.id} and is_final and outcome in ('passed', 'failed', 'flaky')`;
  const failed = await sql<{ group_id: string }[]>`
    select distinct group_id from failure_group_events where project_id = ${run.project_id} and test_run_id = ${run.id} and kind in ('attach', 'sighting')
    union
    select distinct failure_group_id from test_results where test_run_id = ${run.id} and is_final and failure_group_id is not null`;
  const failedGroups = new Set(failed.map((row) => row.group_id));
  const passedTests = results.filter((row) => row.outcome === 'passed').map((row) => row.test_case_id);
  const passed =
    groupIds.length === 0 || passedTests.length === 0
      ? []
      : await sql<{ group_id: string }[]>`
          select distinct group_id from failure_group_events
          where project_id = ${run.project_id} and group_id = any(${groupIds}::text[]) and test_case_id = any(${passedTests}::text[]) and kind = 'attach'`;
  return {
    failedGroups,
    passedGroups: new Set(passed.map((row) => row.group_id).filter((id) => !failedGroups.has(id))),
    tests: new Map(results.map((row) => [row.test_case_id, row.outcome])),
  };
}

// What an issue tells of its subject.

export interface Sighting {
  run_id: number;
  run_number: number;
  environment: string;
  branch: string | null;
  outcome: string;
  at: Date | null;
}

export interface SubjectStory {
  title: string;
  error: string | null;
  tests: { id: string; title: string; file_path: string }[];
  /** The latest runs where it failed, newest first. */
  failing: Sighting[];
  /** Its latest outcomes (a test) or sightings (a group), newest first. */
  history: Sighting[];
}

export async function groupStory(sql: Tx, projectId: number, groupId: string): Promise<SubjectStory | null> {
  const [group] = await sql<{ title: string }[]>`select title from failure_groups where project_id = ${projectId} and id = ${groupId}`;
  if (!group) return null;
  const failing = await sql<Sighting[]>`
    select r.id as run_id, r.number as run_number, e.slug as environment, coalesce(r.build_branch, r.test_run_branch) as branch, 'failed' as outcome,
           coalesce(r.run_ended_at, r.created_at) as at
    from test_runs r join environments e on e.id = r.environment_id
    where r.project_id = ${projectId}
      and r.id in (select test_run_id from failure_group_events where project_id = ${projectId} and group_id = ${groupId} and test_run_id is not null)
    order by r.id desc limit 10`;
  const tests = await sql<{ id: string; title: string; file_path: string }[]>`
    select distinct on (ev.test_case_id) ev.test_case_id as id, coalesce(tc.name, ev.test_case_id) as title, coalesce(tc.file_path, '') as file_path
    from failure_group_events ev left join test_cases tc on tc.project_id = ${projectId} and tc.id = ev.test_case_id
    where ev.project_id = ${projectId} and ev.group_id = ${groupId} and ev.kind = 'attach'
    order by ev.test_case_id limit 20`;
  const [error] = await sql<{ message: string | null }[]>`
    select t.final_error_message as message from test_results t
    where t.test_run_id = any(${failing.map((s) => s.run_id)}::int[]) and t.is_final and t.failure_group_id = ${groupId} and t.final_error_message is not null
    order by t.test_run_id desc limit 1`;
  return { title: group.title, error: error?.message ?? null, tests, failing, history: failing };
}

export async function testStory(sql: Tx, projectId: number, testCaseId: string): Promise<SubjectStory | null> {
  const [test] = await sql<
    { title: string; file_path: string }[]
  >`select name as title, file_path from test_cases where project_id = ${projectId} and id = ${testCaseId}`;
  if (!test) return null;
  const history = await sql<(Sighting & { error: string | null })[]>`
    select r.id as run_id, r.number as run_number, e.slug as environment, coalesce(r.build_branch, r.test_run_branch) as branch, t.outcome,
           coalesce(r.run_ended_at, r.created_at) as at, t.final_error_message as error
    from test_results t join test_runs r on r.id = t.test_run_id join environments e on e.id = r.environment_id
    where r.project_id = ${projectId} and t.test_case_id = ${testCaseId} and t.is_final and t.outcome in ('passed', 'failed', 'flaky')
    order by r.id desc limit 20`;
  const failing = history.filter((s) => s.outcome !== 'passed');
  return {
    title: test.title,
    error: failing.find((s) => s.error !== null)?.error ?? null,
    tests: [{ id: testCaseId, title: test.title, file_path: test.file_path }],
    failing: failing.slice(0, 10),
    history: history.slice(0, 10),
  };
}
