import type { OrderStrategy } from '@proctor/reporter/runs/order';
import type { Tx } from '../db.ts';
import type { RunState } from '../states.ts';
import { type OutcomeCounts, outcomeCountColumns } from './record.ts';
import type { RunSelection } from '../selection/index.ts';
import type { SummaryDetail, Trigger } from './schema.ts';

export interface RunRow {
  id: number;
  /** The run's number in its project (#1 is its first run): what pages and messages name it by. */
  number: number;
  project_id: number;
  environment_id: number;
  environment_slug: string;
  environment_name: string;
  state: RunState;
  origin: 'api' | 'schedule' | 'reporter';
  total_shards: number;
  test_run_branch: string | null;
  build_url: string | null;
  pull_request: number | null;
  build_branch: string | null;
  /** The CI job that asked for the run (`proctor-ci run` keeps it in the run's metadata). */
  ci_build_url: string | null;
  commit: string | null;
  test_run_head_sha: string | null;
  total_count: number;
  success_count: number;
  failed_count: number;
  skipped_count: number;
  flaky_count: number;
  snoozed_count: number;
  duration: number | null;
  error_reason: string | null;
  cancel_reason: string | null;
  cancelled_by: string | null;
  /** Fail fast: the run stops after this many failures no snooze covers. */
  max_failures: number | null;
  /** How its units were handed out (issue 56); null where Playwright chose. */
  order_strategy: OrderStrategy | null;
  /** Affected runs: which tests the run ran, and why (migration 060); null when it did not ask. */
  selection: RunSelection | null;
  rerun_source_id: number | null;
  pinned: boolean;
  details_deleted_at: Date | null;
  created_at: Date;
  run_started_at: Date | null;
  run_ended_at: Date | null;
}

const columns = (sql: Tx) => sql`
  r.id, r.number, r.project_id, r.environment_id, e.slug as environment_slug, e.name as environment_name, r.state, r.origin,
  r.total_shards, r.test_run_branch, r.build_url, r.pull_request, r.build_branch, r.metadata->>'ci_build_url' as ci_build_url, r."commit", r.test_run_head_sha, r.total_count,
  r.success_count, r.failed_count, r.skipped_count, r.flaky_count, r.snoozed_count, r.duration, r.error_reason,
  r.cancel_reason, r.cancelled_by, r.max_failures, r.order_strategy, r.selection, r.rerun_source_id, r.pinned, r.details_deleted_at, r.created_at, r.run_started_at, r.run_ended_at`;

/** A run's state and who cancelled it, and nothing more: what a reporter asks each second while its tests run. */
export async function getRunState(
  sql: Tx,
  projectId: number,
  id: number,
): Promise<{ state: RunState; cancelled_by: string | null; cancel_reason: string | null } | null> {
  const [row] = await sql<{ state: RunState; cancelled_by: string | null; cancel_reason: string | null }[]>`
    select state, cancelled_by, cancel_reason from test_runs where project_id = ${projectId} and id = ${id}`;
  return row ?? null;
}

export async function getRun(sql: Tx, projectId: number, id: number): Promise<RunRow | null> {
  const [row] = await sql<RunRow[]>`
    select ${columns(sql)} from test_runs r join environments e on e.id = r.environment_id
    where r.project_id = ${projectId} and r.id = ${id}`;
  return row ?? null;
}

/** For the public summary page, whose signed link carries no project scope. */
export async function getRunById(sql: Tx, id: number): Promise<RunRow | null> {
  const [row] = await sql<RunRow[]>`
    select ${columns(sql)} from test_runs r join environments e on e.id = r.environment_id where r.id = ${id}`;
  return row ?? null;
}

/** The numbers (in the project) of the project's runs of `ids`, by id: for pages that name runs another table refers to. */
export async function runNumbers(sql: Tx, projectId: number, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: number; number: number }[]>`
    select id, number from test_runs where project_id = ${projectId} and id = any(${ids}::int[])`;
  return new Map(rows.map((row) => [row.id, row.number]));
}

export interface RunFilter {
  environment?: string;
  states: string[];
  branch?: string;
  /** Only runs made at or after this time. */
  since?: Date;
  /** Only runs with a failed or flaky test this owner owns (`@org/team`), as a run's page filters its failures. */
  owner?: string | undefined;
  limit: number;
  offset: number;
}

/**
 * The runs (`r`) with a failed or flaky test (its final outcome, snoozed or not) that `owner` owns,
 * as a run's page and MCP's get_run filter its failures. A run's counts leave out at once those with
 * neither; the others are each read by the primary key of their results (test_run_id, test_case_id)
 * for the owner's tests (found once, by the index of owners, test_cases_owners). `offset 0` keeps
 * the check per run: made a join, PostgreSQL may read every failed result of the project (the whole
 * table, as results have no index by outcome) to find the few runs a page shows.
 */
export function withFailuresOwnedBy(sql: Tx, projectId: number, owner: string | undefined) {
  if (!owner) return sql``;
  return sql`
    and (r.failed_count > 0 or r.flaky_count > 0)
    and exists (
      select 1 from test_results owned_result
      where owned_result.test_run_id = r.id
        and owned_result.test_case_id = any(array(
          select owned.id from test_cases owned where owned.project_id = ${projectId} and owned.owners @> ${[owner]}::text[]))
        and owned_result.is_final and owned_result.outcome in ('failed', 'flaky')
      offset 0)`;
}

export async function listRuns(sql: Tx, projectId: number, filter: RunFilter): Promise<{ rows: RunRow[]; total: number }> {
  const where = sql`
    r.project_id = ${projectId}
    ${filter.environment ? sql`and e.slug = ${filter.environment}` : sql``}
    ${filter.states.length > 0 ? sql`and r.state = any(${filter.states}::text[])` : sql``}
    ${filter.branch ? sql`and (r.test_run_branch = ${filter.branch} or r.build_branch = ${filter.branch})` : sql``}
    ${filter.since ? sql`and r.created_at >= ${filter.since}` : sql``}
    ${withFailuresOwnedBy(sql, projectId, filter.owner)}`;
  const [count] = await sql<{ total: number }[]>`
    select count(*)::int as total from test_runs r join environments e on e.id = r.environment_id where ${where}`;
  const rows = await sql<RunRow[]>`
    select ${columns(sql)} from test_runs r join environments e on e.id = r.environment_id
    where ${where} order by r.id desc limit ${filter.limit} offset ${filter.offset}`;
  return { rows, total: count?.total ?? 0 };
}

/** A run's tests as the API lists them, attachments aside, with the steps its failure's category is decided from. */
export type StoredDetail = Omit<SummaryDetail, 'attachments' | 'failure_category'> & { failed_steps: { category: string; title: string }[] | null };

/** The run's tests, failed first, then flaky, passed and skipped; the first `limit` of them when given. */
export async function getSummaryDetails(sql: Tx, runId: number, limit: number | null = null): Promise<StoredDetail[]> {
  return sql<StoredDetail[]>`
    select r.test_case_id, t.title, t.file_path, t.runner_project, r.outcome as status, r.snoozed,
           r.total_duration as duration, r.retry as retries, r.final_error_message as error_message, r.failure_group_id,
           g.title as failure_group_title, r.skip_reason, r.failed_steps, coalesce(tc.owners, '{}') as owners
    from test_results r
    join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
    left join test_cases tc on tc.project_id = t.project_id and tc.id = t.test_case_id
    left join failure_groups g on r.failure_group_id is not null and g.id = r.failure_group_id
      and g.project_id = (select project_id from test_runs where id = ${runId})
    where r.test_run_id = ${runId} and r.is_final
    order by case r.outcome when 'failed' then 0 when 'flaky' then 1 when 'passed' then 2 else 3 end, t.file_path, t.title,
             t.runner_project
    ${limit === null ? sql`` : sql`limit ${limit}`}`;
}

export interface ProjectCount {
  runner_project: string;
  status: string;
  count: number;
}

/** How many of the run's tests ended each way, per runner project. */
export async function countsByRunnerProject(sql: Tx, runId: number): Promise<ProjectCount[]> {
  return sql<ProjectCount[]>`
    select t.runner_project, r.outcome as status, count(*)::int as count
    from test_results r join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
    where r.test_run_id = ${runId} and r.is_final
    group by 1, 2 order by 1, 2`;
}

/** The source run's tests whose final outcome was a failure, in every runner project where they failed. */
export async function failedTestIds(sql: Tx, runId: number): Promise<string[]> {
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results where test_run_id = ${runId} and is_final and outcome = 'failed' order by test_case_id`;
  return rows.map((row) => row.test_case_id);
}

/**
 * The run before this one in its environment on its branch that ended passed or failed and still
 * has its results: what "new" and "still failing" are told against, and what a comparison defaults to.
 */
export async function previousRun(
  sql: Tx,
  run: Pick<RunRow, 'id' | 'project_id' | 'environment_id' | 'test_run_branch'>,
): Promise<{ id: number; number: number } | null> {
  const [row] = await sql<{ id: number; number: number }[]>`
    select id, number from test_runs
    where project_id = ${run.project_id} and environment_id = ${run.environment_id} and id < ${run.id}
      and test_run_branch is not distinct from ${run.test_run_branch}
      and state in ('passed', 'failed') and details_deleted_at is null
    order by id desc limit 1`;
  return row ?? null;
}

/** Of these tests, those whose final outcome in the run was a failure. */
export async function failedIn(sql: Tx, runId: number, testIds: string[]): Promise<Set<string>> {
  if (testIds.length === 0) return new Set();
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results
    where test_run_id = ${runId} and is_final and outcome = 'failed' and test_case_id = any(${testIds}::text[])`;
  return new Set(rows.map((row) => row.test_case_id));
}

/** Where each of these tests' final failure in the run happened (`file:line:column`) and its first frames in the suite's files, as the reporter sent them. */
export async function failureLocations(sql: Tx, runId: number, testIds: string[]): Promise<Map<string, { location: string | null; frames: string[] }>> {
  if (testIds.length === 0) return new Map();
  const rows = await sql<{ test_case_id: string; error_location: string | null; stack_frames: string[] | null }[]>`
    select test_case_id, error_location, stack_frames from test_results
    where test_run_id = ${runId} and is_final and test_case_id = any(${testIds}::text[])`;
  return new Map(rows.map((row) => [row.test_case_id, { location: row.error_location, frames: row.stack_frames ?? [] }]));
}

/** The first of `testIds` that the run holds a result of, or null. */
export async function firstStoredTest(sql: Tx, runId: number, testIds: string[]): Promise<string | null> {
  const [stored] = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results where test_run_id = ${runId} and test_case_id = any(${testIds}::text[]) limit 1`;
  return stored?.test_case_id ?? null;
}

/** Whether a test of the shard failed in the end, and no snooze covers it. */
export async function shardHasUnsnoozedFailure(sql: Tx, runId: number, shard: number): Promise<boolean> {
  const [row] = await sql<{ failed: boolean }[]>`
    select exists (select 1 from test_results where test_run_id = ${runId} and shard = ${shard} and is_final and outcome = 'failed' and not snoozed) as failed`;
  return row?.failed ?? false;
}

export interface UploadCounts {
  tests: number;
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
  failed_snoozed: number;
}

/** What the shard's results add up to, and its first failed tests. */
export async function uploadedResults(
  sql: Tx,
  shard: { runId: number; shard: number },
  limit: number,
): Promise<{ counts: UploadCounts; failed: { test_case_id: string; title: string; file_path: string; snoozed: boolean }[] }> {
  const [counts] = await sql<UploadCounts[]>`
    select count(*)::int as tests,
           count(*) filter (where outcome = 'passed')::int as passed,
           count(*) filter (where outcome = 'failed')::int as failed,
           count(*) filter (where outcome = 'flaky')::int as flaky,
           count(*) filter (where outcome = 'skipped')::int as skipped,
           count(*) filter (where outcome = 'failed' and snoozed)::int as failed_snoozed
    from test_results where test_run_id = ${shard.runId} and shard = ${shard.shard} and is_final`;
  const failed = await sql<{ test_case_id: string; title: string; file_path: string; snoozed: boolean }[]>`
    select r.test_case_id, t.title, t.file_path, r.snoozed
    from test_results r join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
    where r.test_run_id = ${shard.runId} and r.shard = ${shard.shard} and r.is_final and r.outcome = 'failed'
    order by t.file_path, t.title limit ${limit}`;
  return { counts: counts as UploadCounts, failed };
}

/** A run's state, where the project has the run. */
export async function runStateInProject(sql: Tx, projectId: number, runId: number): Promise<RunState | null> {
  const [run] = await sql<{ state: RunState }[]>`select state from test_runs where project_id = ${projectId} and id = ${runId}`;
  return run?.state ?? null;
}

/** A run's final outcomes, counted from its results (the batches' running counts are for the run while it goes). */
export async function countFinalOutcomes(sql: Tx, runId: number): Promise<OutcomeCounts> {
  const [counts] = await sql<OutcomeCounts[]>`
    select ${outcomeCountColumns(sql)} from test_results where test_run_id = ${runId} and is_final`;
  return counts as OutcomeCounts;
}

/** What a rerun takes from the run it repeats. */
export interface SourceRun {
  id: number;
  test_run_branch: string | null;
  build: Trigger['build'] | null;
  tags: string[];
  test_case_ids: string[];
  total_shards: number;
  distribution: 'shards' | 'agents';
  details_deleted_at: Date | null;
}

export async function getSourceRun(sql: Tx, projectId: number, runId: number): Promise<SourceRun | null> {
  const [source] = await sql<SourceRun[]>`
    select id, test_run_branch, build, tags, test_case_ids, total_shards, distribution, details_deleted_at from test_runs
    where project_id = ${projectId} and id = ${runId}`;
  return source ?? null;
}

/**
 * How many failures no snooze covers a running run has, when they have reached its `max_failures`
 * (the caller's: the results' write read it from the run's row, set when a run is made, never
 * after); null otherwise.
 */
export async function failureLimitReached(sql: Tx, runId: number, maxFailures: number): Promise<number | null> {
  const [run] = await sql<{ failing: number }[]>`
    select failed_count - snoozed_count as failing from test_runs
    where id = ${runId} and state = 'running' and failed_count - snoozed_count >= ${maxFailures}`;
  return run?.failing ?? null;
}

/** The run's first failures that no snooze covers, in the order they were recorded, with their titles. */
export async function unsnoozedFailures(sql: Tx, runId: number, limit: number): Promise<{ test_case_id: string; title: string }[]> {
  return sql<{ test_case_id: string; title: string }[]>`
    select r.test_case_id, coalesce(t.title, r.test_case_id) as title
    from test_results r left join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
    where r.test_run_id = ${runId} and r.is_final and r.outcome = 'failed' and not r.snoozed
    order by r.started_at nulls last, r.test_case_id limit ${limit}`;
}
