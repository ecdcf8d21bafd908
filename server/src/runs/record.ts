import type { OrderStrategy } from '@proctor/reporter/runs/order';
import type { Tx } from '../db.ts';
import type { Trigger } from './schema.ts';

// The one module that writes `test_runs`: every change of a run's row is a function here.

export interface NewRun {
  environmentId: number;
  /** `agents`: pulled by agents (the executor among them) unit by unit, rather than run in static shards. */
  distribution: 'shards' | 'agents';
  origin: 'api' | 'schedule';
  branch: string | null;
  build: Trigger['build'] | null;
  metadata: Record<string, string | number>;
  overrides: { name: string; value: string }[];
  tags: string[];
  testCaseIds: string[];
  sendNotifications: boolean;
  totalShards: number;
  rerunSourceId: number | null;
  rerunOnlyFailed: boolean;
  scmActor: string | null;
  scheduledFor: Date | null;
  /** Fail fast: the run stops after this many failures; null: the environment's limit. */
  maxFailures: number | null;
  /** Run only the tests a change can break (the executor chooses them); absent: every test. */
  affected?: boolean;
}

/** A run waiting for an executor. Returns null when a scheduled tick already made its run. */
export async function createPendingRun(sql: Tx, projectId: number, run: NewRun, now: Date) {
  const [row] = await sql<{ id: number; number: number; state: 'pending'; test_run_branch: string | null; created_at: Date }[]>`
    insert into test_runs (project_id, environment_id, state, origin, distribution, test_run_branch, build, build_url, build_branch, "commit",
                           metadata, environment_variables_overrides, tags, test_case_ids, send_notifications, total_shards,
                           rerun_source_id, rerun_only_failed, scm_actor, scheduled_for, max_failures, affected, created_at)
    values (${projectId}, ${run.environmentId}, 'pending', ${run.origin}, ${run.distribution}, ${run.branch}, ${run.build ? sql.json(run.build) : null},
            ${run.build?.url ?? null}, ${run.build?.branch ?? null}, ${run.build?.commit ?? null}, ${sql.json(run.metadata)},
            ${sql.json(run.overrides)}, ${run.tags}, ${run.testCaseIds}, ${run.sendNotifications}, ${run.totalShards},
            ${run.rerunSourceId}, ${run.rerunOnlyFailed}, ${run.scmActor}, ${run.scheduledFor},
            coalesce(${run.maxFailures}::int, (select max_failures from environments where id = ${run.environmentId})), ${run.affected ?? false}, ${now})
    on conflict (environment_id, scheduled_for) where scheduled_for is not null do nothing
    returning id, number, state, test_run_branch, created_at`;
  return row ?? null;
}

export interface ReportRunInput {
  environmentId: number;
  runKey: string | null;
  totalShards: number;
  branch: string | null;
  commit: string | null;
  buildUrl: string | null;
  pullRequest: number | null;
  /** Fail fast: the run stops after this many failures; null: the environment's limit. */
  maxFailures: number | null;
}

/** A report-only run found or made by `findOrCreateReportRun`. */
export interface ReportRun {
  id: number;
  /** Its number in the project (a database trigger gives it: migrations/042_run_numbers.sql). */
  number: number;
  environment_id: number;
  state: string;
  created: boolean;
}

/** The run that a run key names already, found by those that came after the one that made it. */
async function runOfKey(sql: Tx, projectId: number, runKey: string): Promise<ReportRun> {
  const [existing] = await sql<Omit<ReportRun, 'created'>[]>`
    select id, number, environment_id, state from test_runs where project_id = ${projectId} and run_key = ${runKey}`;
  return { ...(existing as Omit<ReportRun, 'created'>), created: false };
}

/**
 * The run a run key names already, found by a shard that joins it, when the environment its report
 * names by slug is that run's and usable (not disabled). One read, no write: a build's shards but
 * its first join a run made already. Null otherwise (no such run, another environment, one
 * disabled or not made yet): the report then takes the path that finds or makes both, and refuses.
 */
export async function joinableRunOfKey(sql: Tx, projectId: number, runKey: string, environmentSlug: string): Promise<ReportRun | null> {
  const [run] = await sql<Omit<ReportRun, 'created'>[]>`
    select r.id, r.number, r.environment_id, r.state from test_runs r
    join environments e on e.id = r.environment_id and e.project_id = r.project_id
    where r.project_id = ${projectId} and r.run_key = ${runKey} and e.slug = ${environmentSlug} and not coalesce(e.is_disabled, false)`;
  return run ? { ...run, created: false } : null;
}

/**
 * The run of a report-only invocation: created by the first shard, shared by the others through the
 * run key. One statement finds or makes it; only when the run that conflicted was made by a
 * transaction that ended after this statement began (its snapshot does not show that run) is it
 * looked up again.
 */
export async function findOrCreateReportRun(sql: Tx, projectId: number, input: ReportRunInput, now: Date): Promise<ReportRun> {
  const [found] = await sql<ReportRun[]>`
    with created as (
      insert into test_runs (project_id, environment_id, state, origin, run_key, total_shards, test_run_branch, "commit",
                             test_run_head_sha, build_url, pull_request, max_failures, created_at, queued_at, run_started_at, last_activity_at)
      values (${projectId}, ${input.environmentId}, 'running', 'reporter', ${input.runKey}, ${input.totalShards}, ${input.branch},
              ${input.commit}, ${input.commit}, ${input.buildUrl}, ${input.pullRequest},
              coalesce(${input.maxFailures}::int, (select max_failures from environments where id = ${input.environmentId})), ${now}, ${now}, ${now}, ${now})
      on conflict (project_id, run_key) do nothing
      returning id, number, environment_id, state
    )
    select id, number, environment_id, state, true as created from created
    union all
    select id, number, environment_id, state, false as created from test_runs
    where project_id = ${projectId} and run_key = ${input.runKey} and not exists (select 1 from created)`;
  return found ?? runOfKey(sql, projectId, input.runKey as string);
}

/** The run a CI build's agents share: made pending by the first, found by the others through the run key. */
export async function findOrCreateAgentRun(sql: Tx, projectId: number, input: ReportRunInput, now: Date): Promise<ReportRun> {
  const [created] = await sql<Omit<ReportRun, 'created'>[]>`
    insert into test_runs (project_id, environment_id, state, origin, distribution, run_key, total_shards, test_run_branch, "commit",
                           build_url, pull_request, max_failures, created_at)
    values (${projectId}, ${input.environmentId}, 'pending', 'agent', 'agents', ${input.runKey}, 1, ${input.branch}, ${input.commit},
            ${input.buildUrl}, ${input.pullRequest}, coalesce(${input.maxFailures}::int, (select max_failures from environments where id = ${input.environmentId})), ${now})
    on conflict (project_id, run_key) do nothing
    returning id, number, environment_id, state`;
  return created ? { ...created, created: true } : runOfKey(sql, projectId, input.runKey as string);
}

/** How a run is executed, as an agent joining it finds it (locked until the join commits). */
export interface DistributedRun {
  state: string;
  distribution: 'shards' | 'agents';
  planned: boolean;
}

/**
 * An agent joins: a pending run becomes a run of agents, queued for them (the server's executor
 * no longer claims it). Returns the run as it is after, or null when the project has no such run.
 */
export async function distributeToAgents(sql: Tx, projectId: number, runId: number, now: Date): Promise<DistributedRun | null> {
  const [run] = await sql<DistributedRun[]>`
    select state, distribution, planned_at is not null as planned from test_runs where project_id = ${projectId} and id = ${runId} for update`;
  if (!run || run.state !== 'pending') return run ?? null;
  await sql`update test_runs set distribution = 'agents', state = 'queued', queued_at = ${now}, last_activity_at = ${now} where id = ${runId}`;
  return { ...run, state: 'queued', distribution: 'agents' };
}

/**
 * The first plan of a run of agents: its units are its shards. The commit its agent listed is the
 * one the others check out; it and the branch are the run's where the CI named none. Answers the
 * strategy its units are to be ordered by and the branch it is for; null when another agent
 * planned it first.
 */
export async function recordPlan(
  sql: Tx,
  runId: number,
  units: number,
  checkout: { commit: string | null; branch: string | null },
  now: Date,
): Promise<{ order_strategy: OrderStrategy; branch: string | null } | null> {
  // The environment's order strategy now is the one the run's units are ordered by (issue 56).
  const [row] = await sql<{ order_strategy: OrderStrategy; branch: string | null }[]>`
    update test_runs set total_shards = greatest(1, ${units}::int), planned_at = ${now},
                         test_run_head_sha = coalesce(test_run_head_sha, ${checkout.commit}), "commit" = coalesce("commit", ${checkout.commit}),
                         test_run_branch = coalesce(test_run_branch, build_branch, ${checkout.branch}), last_activity_at = ${now},
                         order_strategy = (select e.order_strategy from environments e where e.id = test_runs.environment_id)
    where id = ${runId} and planned_at is null returning order_strategy, coalesce(build_branch, test_run_branch) as branch`;
  return row ?? null;
}

export interface ClaimedRun {
  id: number;
  project_id: number;
  environment_id: number;
  total_shards: number;
  test_run_branch: string | null;
  build: Trigger['build'] | null;
  build_branch: string | null;
  environment_variables_overrides: { name: string; value: string }[];
  tags: string[];
  test_case_ids: string[];
  /** Null when the project's repository was taken away after the run was made: the run ends in error. */
  repo_url: string | null;
  runner_projects_match: string[];
  runner_projects_ignore: string[];
  env_files: string[];
  /** New tests are repeated this many times before the shards start (0: off). */
  burn_in_repeats: number;
  /** The environment's Playwright arguments, which every shard (and the listing) gets. */
  playwright_args: string[];
}

/**
 * Takes the oldest pending run for this executor. SKIP LOCKED lets several server processes on
 * one PostgreSQL claim side by side, and no run is claimed twice.
 */
export async function claimRun(sql: Tx, workerId: string, now: Date): Promise<ClaimedRun | null> {
  const [run] = await sql<ClaimedRun[]>`
    with next as (
      -- A run of agents is theirs to pull: the executor takes the runs of static shards.
      select id from test_runs where state = 'pending' and distribution = 'shards' order by id for update skip locked limit 1
    ), claimed as (
      update test_runs r set state = 'queued', claimed_by = ${workerId}, heartbeat_at = ${now}, queued_at = ${now},
                             executions = r.executions + 1
      from next where r.id = next.id
      returning r.id, r.project_id, r.environment_id, r.total_shards, r.test_run_branch, r.build, r.build_branch,
                r.environment_variables_overrides, r.tags, r.test_case_ids
    )
    select c.*, p.repo_url, e.runner_projects_match, e.runner_projects_ignore, e.env_files, e.burn_in_repeats, e.playwright_args
    from claimed c join projects p on p.id = c.project_id join environments e on e.id = c.environment_id`;
  return run ?? null;
}

/**
 * Takes the oldest pending run of agents, for the server's executor to serve as one more agent.
 * Unclaimed by any one process: the agents' leases, not a heartbeat of the run, keep it alive.
 */
export async function claimAgentRun(sql: Tx, now: Date): Promise<{ id: number; project_id: number } | null> {
  const [run] = await sql<{ id: number; project_id: number }[]>`
    with next as (
      -- A project without a test repository has only agents in the CI job's own checkout: the server cannot be one.
      select id from test_runs r where state = 'pending' and distribution = 'agents'
        and exists (select 1 from projects p where p.id = r.project_id and p.repo_url is not null)
      order by id for update skip locked limit 1
    )
    update test_runs r set state = 'queued', queued_at = ${now}, last_activity_at = ${now}, executions = r.executions + 1
    from next where r.id = next.id
    returning r.id, r.project_id`;
  return run ?? null;
}

/** Keeps the claim alive; returns the run's state so that a cancel made elsewhere is noticed. */
export async function heartbeat(sql: Tx, runId: number, now: Date): Promise<string | null> {
  const [row] = await sql<{ state: string }[]>`update test_runs set heartbeat_at = ${now} where id = ${runId} returning state`;
  return row?.state ?? null;
}

/**
 * A lost run handed back to the executors: pending again, unclaimed, to run `testCaseIds` (the
 * tests it listed that have no final result yet; unchanged when none was listed). Only while
 * it is still claimed by the lost executor, so two sweepers hand it back once.
 */
export async function requeueRun(sql: Tx, runId: number, lostBy: string, testCaseIds: string[] | null): Promise<boolean> {
  const rows = await sql`
    update test_runs set state = 'pending', claimed_by = null, heartbeat_at = null,
      test_case_ids = coalesce(${testCaseIds}::text[], test_case_ids)
    where id = ${runId} and claimed_by = ${lostBy} and state in ('queued', 'running')
    returning id`;
  return rows.length === 1;
}

export interface LostRun {
  id: number;
  claimed_by: string;
  executions: number;
}

/** The runs whose executor stopped beating, with who held them and how often they were executed. */
export async function lostRuns(sql: Tx, now: Date, staleMs: number): Promise<LostRun[]> {
  return sql<LostRun[]>`
    select id, claimed_by, executions from test_runs
    where state in ('queued', 'running') and claimed_by is not null and heartbeat_at < ${new Date(now.getTime() - staleMs)}`;
}

/** The branch the executor resolved for a run that named none. */
export async function recordBranch(sql: Tx, runId: number, branch: string | null): Promise<void> {
  await sql`update test_runs set test_run_branch = ${branch} where id = ${runId}`;
}

/** The commit the executor checked out. */
export async function recordHeadSha(sql: Tx, runId: number, headSha: string | null): Promise<void> {
  await sql`update test_runs set test_run_head_sha = ${headSha} where id = ${runId}`;
}

/** A shard began: the run is running from its first shard's start, on the first commit reported. */
export async function markRunning(sql: Tx, runId: number, startedAt: Date, commit: string | null, now: Date): Promise<void> {
  // A run's shards begin together: a begin that would change nothing but a moment of its activity
  // leaves the row alone, so that they do not queue for its lock (the sweeper counts silence in minutes).
  // Nor does it wait for the row to mark an activity older than that: a transaction that holds the
  // row (a group of batches adding to its counts, a shard's end) is marking it (SKIP LOCKED).
  await sql`
    update test_runs set
      state = 'running',
      run_started_at = coalesce(run_started_at, ${startedAt}),
      test_run_head_sha = coalesce(test_run_head_sha, ${commit}),
      last_activity_at = ${now}
    where id = ${runId}
      and (state <> 'running' or run_started_at is null or (test_run_head_sha is null and ${commit}::text is not null)
           or last_activity_at is null
           or (last_activity_at < ${now}::timestamptz - interval '5 seconds'
               and exists (select 1 from test_runs free where free.id = ${runId} for no key update skip locked)))`;
}

/**
 * The run started no later than `at`: when an upload's files say their tests began (a file's
 * report is uploaded after its tests ran), so that the run's duration, counted from its start to
 * its end, is the tests' and not the upload's.
 */
export async function startedNoLaterThan(sql: Tx, runId: number, at: Date): Promise<void> {
  await sql`update test_runs set run_started_at = least(coalesce(run_started_at, ${at}), ${at}) where id = ${runId}`;
}

/** Something arrived for the run: it is not silent (the sweeper ends silent runs). */
export async function touchRun(sql: Tx, runId: number, now: Date): Promise<void> {
  await sql`update test_runs set last_activity_at = ${now} where id = ${runId}`;
}

/** What a batch's new final results add to a run's counts. */
export interface OutcomeCounts {
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
  snoozed: number;
}

/** The counts of `OutcomeCounts` over final result rows (columns `outcome`, `snoozed`): the one SQL count of outcomes. */
export function outcomeCountColumns(sql: Tx) {
  return sql`
    count(*) filter (where outcome = 'passed')::int as passed,
    count(*) filter (where outcome = 'failed')::int as failed,
    count(*) filter (where outcome = 'flaky')::int as flaky,
    count(*) filter (where outcome = 'skipped')::int as skipped,
    count(*) filter (where outcome = 'failed' and snoozed)::int as snoozed`;
}

/**
 * The statement that adds a batch's counts to its run: the numbers given, or with `'counts'` the
 * CTE of that name in the statement this is embedded in.
 */
export function addToCounts(sql: Tx, runId: number, counts: OutcomeCounts | 'counts', now: Date) {
  const source =
    counts === 'counts'
      ? sql`counts`
      : sql`(select ${counts.passed}::int as passed, ${counts.failed}::int as failed, ${counts.flaky}::int as flaky,
                    ${counts.skipped}::int as skipped, ${counts.snoozed}::int as snoozed)`;
  return sql`
    update test_runs set
      success_count = success_count + c.passed, failed_count = failed_count + c.failed, flaky_count = flaky_count + c.flaky,
      skipped_count = skipped_count + c.skipped, snoozed_count = snoozed_count + c.snoozed,
      total_count = total_count + c.passed + c.failed + c.flaky + c.skipped,
      last_activity_at = ${now}
    from ${source} c
    where id = ${runId}`;
}

/** A run as its end is decided, locked until the end is written. */
export interface EndingRun {
  state: string;
  project_id: number;
  total_shards: number;
  tags: string[];
  test_case_ids: string[];
  error_reason: string | null;
  /** An affected run that left tests out: it does not cover the whole suite. */
  left_tests_out: boolean;
}

export async function lockRun(sql: Tx, runId: number): Promise<EndingRun | null> {
  const [run] = await sql<EndingRun[]>`
    select state, project_id, total_shards, tags, test_case_ids, error_reason, coalesce(selection->>'mode' = 'affected', false) as left_tests_out
    from test_runs where id = ${runId} for update`;
  return run ?? null;
}

/** A run's end from its results: its state, final counts, reason, and duration from its start. */
export async function recordEnd(
  sql: Tx,
  runId: number,
  end: { state: 'passed' | 'failed' | 'error'; counts: OutcomeCounts; reason: string | null },
  now: Date,
): Promise<void> {
  const c = end.counts;
  await sql`
    update test_runs set
      state = ${end.state},
      success_count = ${c.passed}, failed_count = ${c.failed}, flaky_count = ${c.flaky}, skipped_count = ${c.skipped},
      snoozed_count = ${c.snoozed}, total_count = ${c.passed + c.failed + c.flaky + c.skipped},
      error_reason = ${end.reason},
      run_started_at = coalesce(run_started_at, ${now}),
      run_ended_at = ${now},
      duration = greatest(0, round(extract(epoch from (${now}::timestamptz - coalesce(run_started_at, ${now}::timestamptz))) * 1000))::int
    where id = ${runId}`;
}

/** A cancelled run keeps the counts it had; its duration runs to the cancel when it had started. */
export async function recordCancel(sql: Tx, runId: number, reason: string | null, cancelledBy: string, now: Date): Promise<void> {
  await sql`
    update test_runs set
      state = 'cancelled', cancel_reason = ${reason}, cancelled_by = ${cancelledBy},
      run_ended_at = ${now},
      duration = case when run_started_at is null then null
                      else greatest(0, round(extract(epoch from (${now}::timestamptz - run_started_at)) * 1000))::int end
    where id = ${runId}`;
}

/** The retention pass took the run's results, listed tests and attachments (its attachments, if not before). */
export async function markDetailsDeleted(sql: Tx, runId: number, now: Date): Promise<void> {
  await sql`
    update test_runs set details_deleted_at = ${now}, artifacts_deleted_at = coalesce(artifacts_deleted_at, ${now})
    where id = ${runId}`;
}

/** The retention pass took the run's attachments; it keeps its results. */
export async function markArtifactsDeleted(sql: Tx, runId: number, now: Date): Promise<void> {
  await sql`update test_runs set artifacts_deleted_at = ${now} where id = ${runId}`;
}

/** Pins or unpins one of the project's runs; false when there is no such run. */
export async function setPinned(sql: Tx, projectId: number, runId: number, pinned: boolean): Promise<boolean> {
  const rows = await sql`update test_runs set pinned = ${pinned} where project_id = ${projectId} and id = ${runId} returning id`;
  return rows.length > 0;
}
