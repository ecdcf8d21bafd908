import type { Readable } from 'node:stream';
import type { NotifySettings } from '../config.ts';
import type { Clock } from '../context.ts';
import type { Sql, Tx } from '../db.ts';
import { ConflictError } from '../errors.ts';
import { commitToGitHub, commitToGitLab, type Committed, type FilesToCommit, forgeDestinations, queueVisualStatus } from '../notifications/index.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import * as commits from './commit-store.ts';
import { commentLineOf } from './comment-line.ts';
import { descendantsOf, gitSourceOf, pushToRepository } from './git-push.ts';
import { snapshotLayoutOf } from './layout-store.ts';
import { baselinePath, type BaselinePath } from './paths.ts';
import type { BaselineCommit, Baselines } from './schema.ts';
import { classifiedChanges, queueStatus } from './service.ts';

// Approved baselines committed to the run's branch, by a job (never inside a request): the review
// queues a commit once nothing awaits review; the job computes each image's path from the run's
// snapshot layout, then writes all of them as one commit, by a push to the project's repository
// when Proctor ran the run from it, else through the project's GitHub or GitLab destination.
// docs/decisions/baseline-commits.md.

/** A rerun of the changed tests on the branch's new head, made by the runs feature (which stands above this one). */
export type TriggerRerun = (
  tx: Tx,
  rerun: { projectId: number; environmentId: number; sourceRunId: number; branch: string; commit: string; testCaseIds: string[] },
  now: Date,
) => Promise<{ id: number; number: number } | null>;

export interface CommitDeps {
  sql: Sql;
  storage: BlobStorage;
  clock: Clock;
  settings: NotifySettings;
  /** Absent: no rerun is triggered (the review page still links the first run on the commit). */
  triggerRerun?: TriggerRerun;
}

/** Attempts before a commit that keeps failing (a branch that keeps moving, a host that is down) is left `failed`. */
const MAX_ATTEMPTS = 5;
const RETRY_BASE_MS = 30_000;

/** Runs Proctor triggered, whose checkout is the project's repository. */
const TRIGGERED = new Set(['api', 'schedule']);

export async function bytesOf(storage: BlobStorage, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await storage.open(key)) as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Each approved image of the run with its path in the repository, or why that cannot be told. */
export async function approvedPaths(
  sql: Tx,
  projectId: number,
  runId: number,
  uncommitted: boolean,
): Promise<{ image: commits.ApprovedImage; path: BaselinePath }[]> {
  const [layout, approved, classified] = await Promise.all([
    snapshotLayoutOf(sql, runId),
    commits.approvedImages(sql, projectId, runId, uncommitted),
    classifiedChanges(sql, projectId, runId),
  ]);
  // A flaky or noisy screenshot is no baseline, whatever review it had before it was known to be one.
  const real = new Set(classified.filter((row) => row.verdict.kind === 'change').map((row) => row.id));
  const images = approved.filter((image) => real.has(image.id));
  return images.map((image) => {
    if (!layout) return { image, path: { ok: false, reason: "the run's reporter reported no snapshot layout (a reporter before 0.4.0, or a JUnit upload)" } };
    if (image.file_path === null || image.runner_project === null) return { image, path: { ok: false, reason: 'the test is not in the inventory' } };
    return {
      image,
      path: baselinePath(layout, {
        filePath: image.file_path,
        runnerProject: image.runner_project,
        snapshotName: image.snapshot_name,
        titles: [...(image.suites ?? []), image.title ?? ''],
      }),
    };
  });
}

async function write(tx: Tx, deps: CommitDeps, due: commits.DueCommit, commit: FilesToCommit): Promise<{ via: 'github' | 'gitlab' | 'git' } & Committed> {
  if (due.repo_url !== null && TRIGGERED.has(due.origin)) {
    const source = await gitSourceOf(due.repo_url);
    if (source !== null) return { via: 'git', ...(await pushToRepository(source, commit)) };
  }
  const [destination] = await forgeDestinations(tx, due.project_id, deps.settings);
  if (destination?.type === 'github') return { via: 'github', ...(await commitToGitHub(destination, deps.settings, commit)) };
  if (destination?.type === 'gitlab') return { via: 'gitlab', ...(await commitToGitLab(destination, deps.settings, commit)) };
  return {
    via: 'git',
    kind: 'refused',
    reason:
      'nowhere to commit: the run was not triggered by Proctor from the project repository, and the project has no GitHub or GitLab destination that may write there',
  };
}

/** Makes the next commit due; false when none is. */
export function commitBaselinesNext(deps: CommitDeps): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    const now = deps.clock();
    const due = await commits.takeDueCommit(tx, now);
    if (!due) return false;
    const outcome = await attempt(tx, deps, due);
    if (outcome.kind === 'committed') {
      await commits.markCommitted(tx, due.id, { via: outcome.via, sha: outcome.sha, url: outcome.url, files: outcome.files }, deps.clock());
      if (!(outcome.via === 'git' && (await rerun(tx, deps, due, outcome)))) {
        const baselines = `${outcome.files.length} baseline${outcome.files.length === 1 ? '' : 's'}`;
        const description = `${baselines} committed in ${outcome.sha.slice(0, 12)}; the next run on the branch proves them`;
        await queueVisualStatus(tx, due.test_run_id, 'success', description, now, await commentLineOf(tx, due.project_id, due.test_run_id));
      }
    } else if (outcome.kind === 'refused') {
      await commits.markNotCommitted(tx, due.id, 'refused', outcome.reason, null, deps.clock());
      // The status stays what the review made it; the request comment's line says the baselines were not committed.
      await queueStatus(tx, due.project_id, due.test_run_id, now);
    } else {
      const retry = due.attempts + 1 < MAX_ATTEMPTS;
      const retryAt = retry ? new Date(deps.clock().getTime() + RETRY_BASE_MS * 2 ** due.attempts) : null;
      await commits.markNotCommitted(tx, due.id, retry ? 'queued' : 'failed', outcome.error, retryAt, deps.clock());
      if (!retry) await queueStatus(tx, due.project_id, due.test_run_id, now);
    }
    return true;
  });
}

/**
 * Pushed to the repository Proctor runs from: Proctor runs the changed tests again on the new
 * commit itself (only them, as a rerun of failed tests would), and the status says so.
 */
async function rerun(tx: Tx, deps: CommitDeps, due: commits.DueCommit, made: { sha: string; files: { change_id: number }[] }): Promise<boolean> {
  if (!deps.triggerRerun || due.branch === null) return false;
  const found = await commits.approvedImages(tx, due.project_id, due.test_run_id, false);
  const written = new Set(made.files.map((f) => f.change_id));
  const testCaseIds = [...new Set(found.filter((image) => written.has(image.id)).map((image) => image.test_case_id))];
  const now = deps.clock();
  const run = await deps.triggerRerun(
    tx,
    { projectId: due.project_id, environmentId: due.environment_id, sourceRunId: due.test_run_id, branch: due.branch, commit: made.sha, testCaseIds },
    now,
  );
  if (!run) return false;
  await commits.recordRerun(tx, due.id, run.id);
  const baselines = `${made.files.length} baseline${made.files.length === 1 ? '' : 's'}`;
  const description = `${baselines} committed in ${made.sha.slice(0, 12)}; rerun #${run.number} proving them`;
  await queueVisualStatus(tx, due.test_run_id, 'success', description, now, await commentLineOf(tx, due.project_id, due.test_run_id));
  return true;
}

/** At most this many proofs are recorded in one pass. */
const PROOF_LIMIT = 20;

/** At most this many later runs of a commit's branch are looked at in one pass. */
const LATER_RUNS = 50;

/**
 * The run that proves a baseline commit, among the later runs of its environment and branch (the
 * oldest first): the first on the commit itself or on a commit descending from it (the project's
 * repository tells, docs/decisions/visual-descendant-proof.md), once it ended; null while it runs
 * or none is yet. `checked`: the last run found not to hold the baselines (not looked at again).
 */
export async function provingRun(
  commit: Pick<commits.Unproved, 'commit_sha' | 'branch' | 'repo_url'>,
  runs: commits.LaterRun[],
  descendants: typeof descendantsOf = descendantsOf,
): Promise<{ run: commits.LaterRun | null; checked: number | null }> {
  // The runs up to the first on the commit itself or the first not over: the others ended on other commits.
  const stop = runs.findIndex((run) => run.commit === commit.commit_sha || !ENDED.has(run.state));
  const ended = stop === -1 ? runs : runs.slice(0, stop);
  const others = ended.flatMap((run) => (run.commit === null ? [] : [run.commit]));
  const descending = others.length > 0 && commit.repo_url !== null ? await descendants(commit.repo_url, commit.branch, commit.commit_sha, others) : null;
  let checked: number | null = null;
  for (const run of ended) {
    if (run.commit !== null && descending?.has(run.commit)) return { run, checked };
    checked = run.id;
  }
  const next = stop === -1 ? undefined : runs[stop];
  return { run: next && next.commit === commit.commit_sha && ENDED.has(next.state) ? next : null, checked };
}

/**
 * Records the proof of baseline commits whose proving run has ended: whether the approved tests
 * passed there. The run's `proctor/visual` status says "proved by run #N" or "still failing in run
 * #N". Answers whether it recorded one or looked at a later run.
 */
export function proveNext(deps: Pick<CommitDeps, 'sql' | 'clock'>): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    const now = deps.clock();
    let progress = false;
    for (const commit of await commits.unproved(tx, PROOF_LIMIT)) {
      const { run: proving, checked } = await provingRun(commit, await commits.laterRuns(tx, commit, LATER_RUNS));
      if (checked !== null) {
        await commits.recordProofChecked(tx, commit.id, checked);
        progress = true;
      }
      if (!proving) continue;
      const outcomes = await commits.finalOutcomes(tx, proving.id, commit.test_case_ids);
      const proof = proofOf(commit.test_case_ids, outcomes);
      await commits.recordProof(tx, commit.id, proving.id, proof, now);
      progress = true;
      const run = `run #${proving.number}`;
      const on = proving.commit === commit.commit_sha ? '' : ` on descendant ${(proving.commit as string).slice(0, 12)}`;
      const [state, description] =
        proof === 'passed'
          ? (['success', `baselines ${commit.commit_sha.slice(0, 12)} proved by ${run}${on}`] as const)
          : proof === 'failing'
            ? (['failure', `approved screenshots still failing in ${run}${on}`] as const)
            : (['success', `baselines committed; ${run} on ${(proving.commit ?? commit.commit_sha).slice(0, 12)} did not run the approved tests`] as const);
      await queueVisualStatus(tx, commit.test_run_id, state, description, now, await commentLineOf(tx, commit.project_id, commit.test_run_id));
    }
    return progress;
  });
}

/** passed: every approved test passed (a flaky pass is a pass); failing: one failed; not_run: none of them ran. */
export function proofOf(testIds: string[], outcomes: Map<string, string>): 'passed' | 'failing' | 'not_run' {
  const ran = testIds.filter((id) => outcomes.has(id) && outcomes.get(id) !== 'skipped');
  if (ran.length === 0) return 'not_run';
  return ran.some((id) => outcomes.get(id) === 'failed') ? 'failing' : 'passed';
}

type Attempted =
  | { kind: 'committed'; via: 'github' | 'gitlab' | 'git'; sha: string; url: string | null; files: { change_id: number; path: string }[] }
  | Exclude<Committed, { kind: 'committed' }>;

async function attempt(tx: Tx, deps: CommitDeps, due: commits.DueCommit): Promise<Attempted> {
  if (due.branch === null) return { kind: 'refused', reason: 'the run has no branch to commit to' };
  const found = await approvedPaths(tx, due.project_id, due.test_run_id, true);
  if (found.length === 0) return { kind: 'refused', reason: 'no approved image is left to commit' };
  const unknown = found.find((f) => !f.path.ok);
  if (unknown && !unknown.path.ok) return { kind: 'refused', reason: `the path of ${unknown.image.snapshot_name} is not known: ${unknown.path.reason}` };
  const files: { change_id: number; path: string; content: Buffer }[] = [];
  for (const { image, path } of found) {
    if (image.storage_key === null) return { kind: 'refused', reason: `the new image of ${image.snapshot_name} was never uploaded` };
    files.push({ change_id: image.id, path: (path as { path: string }).path, content: await bytesOf(deps.storage, image.storage_key) });
  }
  const count = `${files.length} screenshot baseline${files.length === 1 ? '' : 's'}`;
  const message = `Update ${count} approved in Proctor\n\nApproved in the visual review of run ${due.run_number === null ? due.test_run_id : `#${due.run_number}`}:\n${files.map((f) => `- ${f.path}`).join('\n')}\n`;
  const written = await write(tx, deps, due, { branch: due.branch, message, files, allowDefaultBranch: due.to_default_branch });
  if (written.kind !== 'committed') return written;
  return { ...written, files: files.map(({ change_id, path }) => ({ change_id, path })) };
}

const ENDED = new Set(['passed', 'failed', 'error', 'cancelled']);

export function presentCommit(row: commits.CommitRow): BaselineCommit {
  const { rerun_id, rerun_number, proof_run_id, proof_run_number, proof_run_state, proof, ...commit } = row;
  const run = proof_run_number === null ? '' : `run #${proof_run_number}`;
  const state = proof ?? (proof_run_state !== null && ENDED.has(proof_run_state) ? 'ended' : 'awaiting');
  const summary: Record<typeof state, string> = {
    passed: `proved by ${run}`,
    failing: `still failing in ${run}`,
    not_run: `${run} did not run the approved tests`,
    ended: `${run} ended; its proof is being recorded`,
    awaiting: `${run} is under way`,
  };
  return {
    ...commit,
    queued_at: row.queued_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    rerun: rerun_id === null ? null : { run_id: rerun_id, run_number: rerun_number as number },
    proof: proof_run_id === null ? null : { run_id: proof_run_id, run_number: proof_run_number as number, state, summary: summary[state] },
  };
}

/** The run's approved images with their paths and signed URLs (`imageUrl` signs one), and its commits. */
export async function runBaselines(sql: Sql, projectId: number, runId: number, imageUrl: (attachmentId: number) => string): Promise<Baselines> {
  const [found, made] = await Promise.all([approvedPaths(sql, projectId, runId, false), commits.runCommits(sql, projectId, runId)]);
  const committedIn = new Map(made.filter((c) => c.state === 'committed').flatMap((c) => c.files.map((f) => [f.change_id, c.id] as const)));
  return {
    files: found.map(({ image, path }) => ({
      change_id: image.id,
      snapshot_name: image.snapshot_name,
      runner_project: image.runner_project,
      path: path.ok ? path.path : null,
      reason: path.ok ? null : path.reason,
      image_url: imageUrl(image.actual_attachment_id),
      committed_in: committedIn.get(image.id) ?? null,
    })),
    commits: made.map(presentCommit),
  };
}

/**
 * Queues a commit of the run's approved images no commit wrote (after a refusal the project's
 * settings since lifted, say); a 409 when none is left, or one is queued already.
 */
export async function requestCommit(sql: Sql, projectId: number, runId: number, requestedBy: string, now: Date): Promise<BaselineCommit> {
  return sql.begin(async (tx) => {
    const left = await commits.approvedImages(tx, projectId, runId, true);
    if (left.length === 0) throw new ConflictError('no approved image of the run is left to commit');
    if (!(await commits.queueBaselineCommit(tx, projectId, runId, requestedBy, now))) throw new ConflictError('a commit of the run is queued already');
    return presentCommit((await commits.runCommits(tx, projectId, runId))[0] as commits.CommitRow);
  }) as Promise<BaselineCommit>;
}
