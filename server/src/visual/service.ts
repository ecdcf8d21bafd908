import type { Readable } from 'node:stream';
import { actorOf, recordChange } from '../audit/index.ts';
import type { AppDeps, Clock } from '../context.ts';
import type { Sql, Tx } from '../db.ts';
import { queueVisualStatus } from '../notifications/index.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { Scope } from '../principals.ts';
import { signedQueryString } from '../signing.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { compareScreenshots, PLAYWRIGHT_THRESHOLD } from './compare.ts';
import type { VisualChange, VisualChanges } from './schema.ts';
import * as store from './store.ts';
import { queueBaselineCommit } from './commit-store.ts';
import { commentLineOf } from './comment-line.ts';
import { type Verdict, withVerdicts } from './verdict.ts';

/** The run's changes (the last attempt of each) with their verdicts: real change, flaky or noise. */
export async function classifiedChanges(sql: Tx, projectId: number, runId: number): Promise<(store.ChangeRow & { verdict: Verdict })[]> {
  return withVerdicts(sql, projectId, runId, await store.listRunChanges(sql, projectId, runId));
}

/** What the comparing job needs: the database, the bytes, the time. */
export interface CompareDeps {
  sql: Sql;
  storage: BlobStorage;
  clock: Clock;
}

/** Screenshots larger than this many pixels (either image) are not compared: the job's memory stays bounded. */
const MAX_PIXELS = 40_000_000;

async function bytesOf(storage: BlobStorage, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await storage.open(key)) as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * One step of the job: finds new screenshot assertions among the attachments, then compares one
 * change whose images are stored. Answers whether it did anything (the loop then goes on).
 */
/** The `proctor/visual` commit status the run's changes call for, and its description. */
export function statusOf(counts: store.Counts): { state: 'pending' | 'success' | 'failure'; description: string } {
  const plural = (n: number) => `${n} visual change${n === 1 ? '' : 's'}`;
  const real = counts.total - counts.flaky - counts.noise;
  const apart = [counts.flaky > 0 ? `${counts.flaky} flaky` : '', counts.noise > 0 ? `${counts.noise} noise` : ''].filter(Boolean).join(', ');
  const aside = apart ? ` (${apart}, not baselines)` : '';
  if (counts.rejected > 0) return { state: 'failure', description: `${counts.rejected} of ${plural(real)} rejected${aside}` };
  if (counts.pending > 0) return { state: 'pending', description: `${plural(counts.pending)} to review${aside}` };
  if (real === 0) return { state: 'success', description: `no real visual change: ${apart}` };
  return { state: 'success', description: `${plural(real)}, all approved${aside}` };
}

/** Queues the run's `proctor/visual` status, as its changes stand in this transaction (none: nothing). */
export async function queueStatus(tx: Tx, projectId: number, runId: number, now: Date): Promise<void> {
  const counts = store.countsOf(await classifiedChanges(tx, projectId, runId));
  if (counts.total === 0) return;
  const { state, description } = statusOf(counts);
  await queueVisualStatus(tx, runId, state, description, now, await commentLineOf(tx, projectId, runId));
}

export async function compareNext(deps: CompareDeps): Promise<boolean> {
  const scanned = await deps.sql.begin(async (tx) => {
    const now = deps.clock();
    const { more, runs } = await store.scanAttachments(tx, now);
    for (const run of runs) await queueStatus(tx, run.project_id, run.test_run_id, now);
    return more;
  });
  const next = await store.nextToCompare(deps.sql);
  if (!next) return scanned;
  let outcome: store.Compared | { error: string };
  try {
    const [expected, actual] = await Promise.all([bytesOf(deps.storage, next.expected_key), bytesOf(deps.storage, next.actual_key)]);
    const tooLarge = [expected, actual].some((png) => png.length >= 24 && png.readUInt32BE(16) * png.readUInt32BE(20) > MAX_PIXELS);
    outcome = tooLarge
      ? { error: `larger than ${MAX_PIXELS} pixels: not compared` }
      : { ...compareScreenshots(expected, actual, PLAYWRIGHT_THRESHOLD), threshold: PLAYWRIGHT_THRESHOLD };
  } catch (error) {
    outcome = { error: `not a PNG image Proctor could read: ${(error as Error).message}`.slice(0, 500) };
  }
  await deps.sql.begin(async (tx) => {
    await store.recordComparison(tx, next.id, outcome, deps.clock());
    // The last comparison of the run may make a diff noise, and the retries' results are in by
    // now: the status is told again, as the run's changes stand.
    if (await store.allCompared(tx, next.test_run_id)) await queueStatus(tx, next.project_id, next.test_run_id, deps.clock());
  });
  return true;
}

type ViewDeps = Pick<AppDeps, 'sql' | 'config' | 'signingSecret'>;

export function attachmentUrl(deps: ViewDeps, id: number, now: Date): string {
  return `${deps.config.publicUrl}/attachments/${id}/content?${signedQueryString(deps.signingSecret, `attachment:${id}`, now)}`;
}

function present(deps: ViewDeps, row: store.ChangeRow & { verdict: Verdict }, now: Date): VisualChange {
  return {
    id: row.id,
    test_run_id: row.test_run_id,
    test_id: row.test_case_id,
    title: row.title,
    file_path: row.file_path,
    runner_project: row.runner_project,
    retry: row.retry,
    snapshot_name: row.snapshot_name,
    expected_url: attachmentUrl(deps, row.expected_attachment_id, now),
    actual_url: attachmentUrl(deps, row.actual_attachment_id, now),
    diff_url: row.diff_attachment_id === null ? null : attachmentUrl(deps, row.diff_attachment_id, now),
    comparison:
      row.compared_at === null
        ? {
            status: 'computing',
            width: null,
            height: null,
            size_changed: null,
            changed_pixels: null,
            changed_ratio: null,
            boxes: [],
            threshold: row.threshold,
            error: null,
          }
        : {
            status: row.compare_error ? 'failed' : 'done',
            width: row.width,
            height: row.height,
            size_changed: row.size_changed,
            changed_pixels: row.changed_pixels,
            changed_ratio: row.changed_ratio,
            boxes: row.boxes ?? [],
            threshold: row.threshold,
            error: row.compare_error,
          },
    max_diff_pixels: null,
    max_diff_pixel_ratio: null,
    verdict: row.verdict.kind,
    verdict_reason: row.verdict.reason,
    review: row.review,
    reviewed_by: row.reviewed_by_name,
    reviewed_at: row.reviewed_at === null ? null : row.reviewed_at.toISOString(),
  };
}

/** The run's visual changes with signed image URLs (an hour from `now`) and their counts by review. */
export async function runVisualChanges(deps: ViewDeps, projectId: number, runId: number, now: Date): Promise<VisualChanges> {
  if (!(await store.runOfProject(deps.sql, projectId, runId))) throw new NotFoundError('test run not found');
  const rows = await classifiedChanges(deps.sql, projectId, runId);
  return { visual_changes: rows.map((row) => present(deps, row, now)), counts: store.countsOf(rows) };
}

/** How many of the run's visual changes there are and await review: for the run page. */
export async function visualCounts(sql: Sql, projectId: number, runId: number): Promise<store.Counts> {
  return store.countsOf(await classifiedChanges(sql, projectId, runId));
}

/**
 * Approves or rejects changes of a run: those named, or all of the run's (`ids` null). Each that
 * changed is kept with who and when and recorded in the audit trail, in one transaction.
 */
export async function reviewChanges(
  deps: ViewDeps,
  scope: Scope,
  runId: number,
  ids: number[] | null,
  review: 'approved' | 'rejected',
  now: Date,
): Promise<VisualChanges> {
  await deps.sql.begin(async (tx) => {
    if (!(await store.runOfProject(tx, scope.projectId, runId))) throw new NotFoundError('test run not found');
    const listed = await classifiedChanges(tx, scope.projectId, runId);
    const known = new Map(listed.map((row) => [row.id, row]));
    const unknown = (ids ?? []).filter((id) => !known.has(id));
    if (unknown.length > 0) throw new NotFoundError(`visual change ${unknown[0]} is not one of run ${runId}'s`);
    // A flaky or noisy screenshot is never a baseline: named, the approval is refused; "all" leaves it out.
    const notBaseline = (ids ?? []).map((id) => known.get(id)).find((row) => row && row.verdict.kind !== 'change');
    if (review === 'approved' && notBaseline)
      throw new ConflictError(`visual change ${notBaseline.id} is ${notBaseline.verdict.kind}, not offered as a baseline: ${notBaseline.verdict.reason ?? ''}`);
    const wanted = ids ?? listed.filter((row) => review === 'rejected' || row.verdict.kind === 'change').map((row) => row.id);
    if (wanted.length === 0) throw new ConflictError(`run ${runId} has no real visual change to approve: every one is flaky or noise`);
    const actor = actorOf(scope);
    if (actor.kind !== 'user' && actor.kind !== 'key') throw new Error('a review is made by a person or a key');
    const reviewer = { id: `${actor.kind}:${actor.id}`, name: await store.reviewerName(tx, actor) };
    const changed = await store.setReview(tx, scope.projectId, runId, wanted, review, reviewer, now);
    // Nothing left to review and an approved image not committed yet: one commit takes them all.
    const after = changed.length > 0 ? await classifiedChanges(tx, scope.projectId, runId) : [];
    if (
      store.countsOf(after).pending === 0 &&
      after.some((row) => row.verdict.kind === 'change' && row.review === 'approved' && row.baseline_commit_id === null)
    )
      await queueBaselineCommit(tx, scope.projectId, runId, reviewer.id, now);
    // After the commit is queued: the request comment's line says the baselines are being committed.
    if (changed.length > 0) await queueStatus(tx, scope.projectId, runId, now);
    for (const change of changed) {
      await recordChange(
        tx,
        {
          projectId: scope.projectId,
          actor,
          action: review === 'approved' ? 'visual_change.approved' : 'visual_change.rejected',
          target: `visual_change:${change.id}`,
          before: { review: change.before, test_run_id: runId, snapshot_name: change.snapshot_name },
          after: { review, test_run_id: runId, snapshot_name: change.snapshot_name },
        },
        now,
      );
    }
  });
  return runVisualChanges(deps, scope.projectId, runId, now);
}
