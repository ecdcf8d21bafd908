import type { Tx } from '../db.ts';
import { withFailuresOwnedBy } from './store.ts';

// The SQL of a live run's stream (issue 55, point 3): how far the run has come, its final results
// stored after a position, and the position a page's snapshot stands at.

/** What a stream watches for change: one primary-key read of the run's row. */
export interface RunPulse {
  project_id: number;
  state: string;
  total_count: number;
  failed_count: number;
  last_activity_at: Date | null;
}

export async function runPulse(sql: Tx, runId: number): Promise<RunPulse | null> {
  const [row] = await sql<RunPulse[]>`
    select project_id, state, total_count, failed_count, last_activity_at from test_runs where id = ${runId}`;
  return row ?? null;
}

/** A final result as the stream sends it. */
export interface LiveResult {
  xid: string;
  test_case_id: string;
  title: string;
  file_path: string;
  runner_project: string;
  status: string;
  duration: number;
  retries: number;
  error_message: string | null;
  failure_group_id: string | null;
  snoozed: boolean;
}

/**
 * The run's final results stored by transactions at or above `horizon` and not in `seen`, with the
 * horizon of the statement's own snapshot: every transaction below it has ended, so that none of
 * their results can show up later. One statement, so one snapshot.
 */
export async function resultsAfter(sql: Tx, runId: number, horizon: string, seen: string[]): Promise<{ horizon: string; results: LiveResult[] }> {
  const [row] = await sql<{ horizon: string; results: LiveResult[] }[]>`
    select pg_snapshot_xmin(pg_current_snapshot())::text as horizon,
      coalesce((
        select json_agg(x order by x.xid8, x.test_case_id) from (
          select r.stored_xid as xid8, r.stored_xid::text as xid, r.test_case_id, t.title, t.file_path, t.runner_project, r.outcome as status,
                 coalesce(r.total_duration, r.duration) as duration, r.retry as retries,
                 coalesce(r.final_error_message, r.error_message) as error_message, r.failure_group_id, r.snoozed
          from test_results r
          join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
          where r.test_run_id = ${runId} and r.is_final and r.stored_xid >= ${horizon}::xid8
            and not (r.stored_xid = any(${seen}::xid8[]))
        ) x
      ), '[]'::json) as results`;
  const found = row as { horizon: string; results: (LiveResult & { xid8?: unknown })[] };
  return { horizon: found.horizon, results: found.results.map(({ xid8: _, ...result }) => result) };
}

/**
 * Where a page read in this snapshot stands: the horizon, and the transactions above it whose
 * results the snapshot sees. Taken before the page reads the run, so that the stream starts from
 * there (a result stored in between comes once more: the page replaces its row).
 */
export async function positionNow(sql: Tx, runId: number): Promise<{ horizon: string; seen: string[] }> {
  const [row] = await sql<{ horizon: string; seen: string[] }[]>`
    select pg_snapshot_xmin(pg_current_snapshot())::text as horizon,
      array(select distinct stored_xid::text from test_results
            where test_run_id = ${runId} and is_final and stored_xid >= pg_snapshot_xmin(pg_current_snapshot())) as seen`;
  return row as { horizon: string; seen: string[] };
}

/** How far a run has come: tests done of those listed, failures so far, and what the tests still to run took before. */
export interface RunProgress {
  state: string;
  total: number;
  done: number;
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
  snoozed: number;
  /** Milliseconds since the run started; null before. */
  elapsed_ms: number | null;
  /** The done tests' durations added up. */
  done_ms: number;
  /** The tests still to run: their mean duration in the environment, else this run's mean so far, added up; null when nothing says. */
  left_test_ms: number | null;
}

export async function runProgress(sql: Tx, runId: number, now: Date): Promise<RunProgress | null> {
  const [row] = await sql<RunProgress[]>`
    with run as (select * from test_runs where id = ${runId}),
    finals as (select test_case_id, coalesce(total_duration, duration) as duration from test_results where test_run_id = ${runId} and is_final),
    latest as (
      select max(day) as day from test_case_cumulative c, run
      where c.project_id = run.project_id and c.environment_id = run.environment_id
    ),
    waiting as (
      select t.test_case_id from test_run_tests t
      where t.test_run_id = ${runId} and not exists (select 1 from finals f where f.test_case_id = t.test_case_id)
    ),
    expected as (
      select w.test_case_id, c.duration_sum::float8 / nullif(c.total_runs, 0) as mean
      from waiting w cross join run
      left join test_case_cumulative c on c.project_id = run.project_id and c.environment_id = run.environment_id
        and c.day = (select day from latest) and c.test_case_id = w.test_case_id
    )
    select run.state,
      greatest((select count(*) from test_run_tests where test_run_id = ${runId}), run.total_count)::int as total,
      run.total_count as done, run.success_count as passed, run.failed_count as failed, run.flaky_count as flaky,
      run.skipped_count as skipped, run.snoozed_count as snoozed,
      case when run.run_started_at is null then null
           else greatest(0, extract(epoch from (coalesce(run.run_ended_at, ${now}) - run.run_started_at)) * 1000)::float8 end as elapsed_ms,
      (select coalesce(sum(duration), 0) from finals)::float8 as done_ms,
      (select sum(coalesce(e.mean, (select avg(duration) from finals))) from expected e)::float8 as left_test_ms
    from run`;
  return row ?? null;
}

/** A run of a project as the runs list shows it: a row's cells, and its counts as they move. */
export interface LiveRunRow {
  id: number;
  number: number;
  state: string;
  environment_name: string;
  /** The branch the list shows (the CI's, else the one the tests ran from). */
  branch: string | null;
  commit: string | null;
  success_count: number;
  failed_count: number;
  flaky_count: number;
  total_count: number;
  created_at: string;
}

/** The runs list's filter, as its page's form gives it. */
export interface RunsListFilter {
  environment?: string | undefined;
  branch?: string | undefined;
  state?: string | undefined;
  /** An owner: runs with a failed or flaky test of theirs (a new run comes once it has one). */
  owner?: string | undefined;
}

/** New runs a list's read sends at most. */
export const NEW_RUNS_READ = 50;

/**
 * The listed runs `runIds`, and (with `after`) the runs made since the list was read, newer than
 * `after`, that its filter shows (at most NEW_RUNS_READ, the newest). One read on the index of a
 * project's runs by id.
 */
export async function runRowsOf(sql: Tx, projectId: number, runIds: number[], after: number | null, filter: RunsListFilter = {}): Promise<LiveRunRow[]> {
  const columns = sql`r.id, r.number, r.state, e.name as environment_name, coalesce(r.build_branch, r.test_run_branch) as branch,
    left(coalesce(r.test_run_head_sha, r.commit), 10) as commit, r.success_count, r.failed_count, r.flaky_count, r.total_count,
    to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI') as created_at`;
  const newer =
    after === null
      ? sql``
      : sql`union
        (select ${columns} from test_runs r join environments e on e.id = r.environment_id
         where r.project_id = ${projectId} and r.id > ${after}
           ${filter.environment ? sql`and e.slug = ${filter.environment}` : sql``}
           ${filter.state ? sql`and r.state = ${filter.state}` : sql``}
           ${filter.branch ? sql`and (r.test_run_branch = ${filter.branch} or r.build_branch = ${filter.branch})` : sql``}
           ${withFailuresOwnedBy(sql, projectId, filter.owner)}
         order by r.id desc limit ${NEW_RUNS_READ})`;
  return sql<LiveRunRow[]>`
    select * from (
      (select ${columns} from test_runs r join environments e on e.id = r.environment_id
       where r.project_id = ${projectId} and r.id = any(${runIds}::int[]))
      ${newer}
    ) listed order by id`;
}
