import type { Tx } from '../db.ts';

// The one module that writes `baseline_commits` (and which commit wrote a change's baseline).

/**
 * Queues a commit of the run's approved baselines that no commit wrote yet; nothing when one is
 * queued already (it takes every approved image when it runs). Answers whether one was queued.
 */
export async function queueBaselineCommit(sql: Tx, projectId: number, runId: number, requestedBy: string, now: Date): Promise<boolean> {
  const rows = await sql`
    insert into baseline_commits (project_id, test_run_id, branch, state, next_attempt_at, requested_by, queued_at)
    select r.project_id, r.id, coalesce(r.build_branch, r.test_run_branch), 'queued', ${now}, ${requestedBy}, ${now}
    from test_runs r where r.id = ${runId} and r.project_id = ${projectId}
    on conflict do nothing returning id`;
  return rows.length > 0;
}

export interface DueCommit {
  id: number;
  project_id: number;
  test_run_id: number;
  run_number: number | null;
  branch: string | null;
  origin: string;
  repo_url: string | null;
  to_default_branch: boolean;
  attempts: number;
  environment_id: number;
}

/** The next queued commit due that no other process holds, locked until the transaction ends. */
export async function takeDueCommit(sql: Tx, now: Date): Promise<DueCommit | null> {
  const [row] = await sql<DueCommit[]>`
    select b.id::int as id, b.project_id, b.test_run_id, r.number as run_number, coalesce(r.build_branch, r.test_run_branch) as branch,
           r.origin, p.repo_url, p.baselines_to_default_branch as to_default_branch, b.attempts,
           r.environment_id
    from baseline_commits b
    join test_runs r on r.id = b.test_run_id
    join projects p on p.id = b.project_id
    where b.state = 'queued' and b.next_attempt_at <= ${now}
    order by b.next_attempt_at, b.id limit 1 for update of b skip locked`;
  return row ?? null;
}

export interface ApprovedImage {
  id: number;
  test_case_id: string;
  snapshot_name: string;
  file_path: string | null;
  runner_project: string | null;
  suites: string[] | null;
  title: string | null;
  storage_key: string | null;
  actual_attachment_id: number;
}

/**
 * The run's approved changes (the last attempt of each test and snapshot), with where their new
 * image's bytes are; `uncommitted`: only those no commit wrote yet.
 */
export async function approvedImages(sql: Tx, projectId: number, runId: number, uncommitted: boolean): Promise<ApprovedImage[]> {
  return sql<ApprovedImage[]>`
    select v.id::int as id, v.test_case_id, v.snapshot_name, c.file_path, c.runner_project, c.suites, c.name as title, ab.storage_key,
           v.actual_attachment_id::int as actual_attachment_id
    from visual_changes v
    left join test_cases c on c.project_id = v.project_id and c.id = v.test_case_id
    join test_attachments a on a.id = v.actual_attachment_id
    left join artifact_blobs ab on ab.id = a.blob_id
    where v.project_id = ${projectId} and v.test_run_id = ${runId} and v.review = 'approved'
      and v.expected_attachment_id is not null
      and (${!uncommitted} or v.baseline_commit_id is null)
      and not exists (
        select 1 from visual_changes later
        where later.test_run_id = v.test_run_id and later.test_case_id = v.test_case_id
          and later.snapshot_name = v.snapshot_name and later.retry > v.retry
          and later.expected_attachment_id is not null and later.actual_attachment_id is not null)
    order by c.file_path nulls last, c.runner_project nulls last, v.snapshot_name, v.id`;
}

/** Written: the commit, how, and which changes' files it holds. */
export async function markCommitted(
  sql: Tx,
  id: number,
  done: { via: 'github' | 'gitlab' | 'git'; sha: string; url: string | null; files: { change_id: number; path: string }[] },
  now: Date,
): Promise<void> {
  await sql`
    update baseline_commits set state = 'committed', via = ${done.via}, commit_sha = ${done.sha}, commit_url = ${done.url},
      files = ${sql.json(done.files as never)}, error = null, attempts = attempts + 1, next_attempt_at = null, finished_at = ${now}
    where id = ${id}`;
  await sql`update visual_changes set baseline_commit_id = ${id} where id = any(${done.files.map((f) => f.change_id)}::bigint[])`;
}

/** Not written: tried again at `retryAt`, or left `failed` (or `refused`, which trying again would not change) when that is null. */
export async function markNotCommitted(
  sql: Tx,
  id: number,
  state: 'queued' | 'failed' | 'refused',
  error: string,
  retryAt: Date | null,
  now: Date,
): Promise<void> {
  await sql`
    update baseline_commits set state = ${state}, error = ${error}, attempts = attempts + 1, next_attempt_at = ${retryAt},
      finished_at = ${state === 'queued' ? null : now}
    where id = ${id}`;
}

export interface CommitRow {
  id: number;
  state: 'queued' | 'committed' | 'failed' | 'refused';
  branch: string | null;
  via: 'github' | 'gitlab' | 'git' | null;
  commit_sha: string | null;
  commit_url: string | null;
  files: { change_id: number; path: string }[];
  error: string | null;
  attempts: number;
  queued_at: Date;
  finished_at: Date | null;
  rerun_id: number | null;
  rerun_number: number | null;
  proof_run_id: number | null;
  proof_run_number: number | null;
  proof_run_state: string | null;
  proof: 'passed' | 'failing' | 'not_run' | null;
}

/**
 * The first run after `o` (the reviewed run) of its environment and the commit's branch whose
 * commit is the baseline commit: the run shown as under way to prove it until a proof is recorded
 * (which a run on a descending commit may make). Statement text for a lateral join on `b`.
 */
const PROOF_RUN = (sql: Tx) => sql`
  select r.id, r.number, r.state from test_runs r join test_runs o on o.id = b.test_run_id
  where r.project_id = b.project_id and r.environment_id = o.environment_id and r.id > o.id
    and coalesce(r.build_branch, r.test_run_branch) = b.branch and coalesce(r.test_run_head_sha, r."commit") = b.commit_sha
  order by r.id limit 1`;

/** The run's baseline commits, the newest first, with the rerun Proctor triggered and the run that proves each. */
export async function runCommits(sql: Tx, projectId: number, runId: number): Promise<CommitRow[]> {
  return sql<CommitRow[]>`
    select b.id::int as id, b.state, b.branch, b.via, b.commit_sha, b.commit_url, b.files, b.error, b.attempts, b.queued_at, b.finished_at,
           b.rerun_id, rr.number as rerun_number, coalesce(pr.id, lr.id) as proof_run_id, coalesce(pr.number, lr.number) as proof_run_number,
           coalesce(pr.state, lr.state) as proof_run_state, b.proof
    from baseline_commits b
    left join test_runs rr on rr.id = b.rerun_id
    left join test_runs pr on pr.id = b.proof_run_id
    left join lateral (${PROOF_RUN(sql)}) lr on b.proof_run_id is null and b.state = 'committed'
    where b.project_id = ${projectId} and b.test_run_id = ${runId} order by b.id desc`;
}

/** The rerun Proctor triggered on the new commit. */
export async function recordRerun(sql: Tx, id: number, rerunId: number): Promise<void> {
  await sql`update baseline_commits set rerun_id = ${rerunId} where id = ${id}`;
}

export interface Unproved {
  id: number;
  project_id: number;
  test_run_id: number;
  commit_sha: string;
  branch: string;
  environment_id: number;
  /** The project's test repository, where a later run's commit is looked up; null: none. */
  repo_url: string | null;
  /** Later runs after this one are looked at. */
  after_run_id: number;
  test_case_ids: string[];
}

/**
 * Committed baselines not proved yet with a later run of their environment and branch that ended
 * since the last look (at most `limit`, locked until the transaction ends).
 */
export async function unproved(sql: Tx, limit: number): Promise<Unproved[]> {
  return sql<Unproved[]>`
    select b.id::int as id, b.project_id, b.test_run_id, b.commit_sha, b.branch, o.environment_id, p.repo_url,
           coalesce(b.proof_checked_run_id, o.id) as after_run_id,
           array(select distinct v.test_case_id from visual_changes v where v.baseline_commit_id = b.id) as test_case_ids
    from baseline_commits b
    join test_runs o on o.id = b.test_run_id
    join projects p on p.id = b.project_id
    where b.state = 'committed' and b.proof is null
      and exists (
        select 1 from test_runs r
        where r.project_id = b.project_id and r.environment_id = o.environment_id and r.id > coalesce(b.proof_checked_run_id, o.id)
          and coalesce(r.build_branch, r.test_run_branch) = b.branch and r.state in ('passed', 'failed', 'error', 'cancelled'))
    order by b.id limit ${limit}
    for update of b skip locked`;
}

export interface LaterRun {
  id: number;
  number: number;
  state: string;
  commit: string | null;
}

/** The runs of the environment and branch after `afterRunId`, the oldest first (at most `limit`). */
export async function laterRuns(sql: Tx, commit: Unproved, limit: number): Promise<LaterRun[]> {
  return sql<LaterRun[]>`
    select r.id, r.number, r.state, coalesce(r.test_run_head_sha, r."commit") as "commit"
    from test_runs r
    where r.project_id = ${commit.project_id} and r.environment_id = ${commit.environment_id} and r.id > ${commit.after_run_id}
      and coalesce(r.build_branch, r.test_run_branch) = ${commit.branch}
    order by r.id limit ${limit}`;
}

/** Runs up to `runId` were looked at and do not hold the baselines: not looked at again. */
export async function recordProofChecked(sql: Tx, id: number, runId: number): Promise<void> {
  await sql`update baseline_commits set proof_checked_run_id = ${runId} where id = ${id}`;
}

/** The final outcomes of these tests in the run, by test. */
export async function finalOutcomes(sql: Tx, runId: number, testIds: string[]): Promise<Map<string, string>> {
  const rows = await sql<{ test_case_id: string; outcome: string }[]>`
    select test_case_id, outcome from test_results
    where test_run_id = ${runId} and test_case_id = any(${testIds}::text[]) and is_final and outcome is not null`;
  return new Map(rows.map((row) => [row.test_case_id, row.outcome]));
}

export async function recordProof(sql: Tx, id: number, runId: number, proof: 'passed' | 'failing' | 'not_run', now: Date): Promise<void> {
  await sql`update baseline_commits set proof_run_id = ${runId}, proof = ${proof}, proved_at = ${now} where id = ${id}`;
}
