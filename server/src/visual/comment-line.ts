import type { Tx } from '../db.ts';
import { runCommits } from './commit-store.ts';
import { countsOf, listRunChanges } from './store.ts';
import { withVerdicts } from './verdict.ts';

// The pull/merge request comment's line on a run's visual changes (issue 57, point 2): how many
// await review, were approved, were rejected, then the newest baseline commit and its proof. Queued
// with each `proctor/visual` status; the comment (notifications) links the review page after it.
// Only numbers, a commit's hexadecimal name and run numbers: nothing a test or repository wrote.

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The line as the run's changes and commits stand in this transaction; null when it has no visual change. */
export async function commentLineOf(sql: Tx, projectId: number, runId: number): Promise<string | null> {
  const counts = countsOf(await withVerdicts(sql, projectId, runId, await listRunChanges(sql, projectId, runId)));
  if (counts.total === 0) return null;
  const real = counts.total - counts.flaky - counts.noise;
  const apart = [counts.flaky > 0 ? `${counts.flaky} flaky` : '', counts.noise > 0 ? `${counts.noise} noise` : ''].filter(Boolean).join(', ');
  let line = `${plural(real, 'change', 'changes')}: ${counts.pending} awaiting review, ${counts.approved} approved, ${counts.rejected} rejected`;
  if (apart) line += ` (and ${apart}, not baselines)`;
  const [newest] = await runCommits(sql, projectId, runId);
  if (newest) line += `; ${commitPart(newest)}`;
  return line;
}

function commitPart(commit: Awaited<ReturnType<typeof runCommits>>[number]): string {
  if (commit.state === 'queued') return 'baselines being committed';
  if (commit.state !== 'committed' || commit.commit_sha === null) return 'baselines not committed (see the review page)';
  const made = `baselines committed in ${commit.commit_sha.slice(0, 12)}`;
  const run = commit.proof_run_number === null ? null : `run #${commit.proof_run_number}`;
  if (commit.proof === 'passed') return `${made}, proved by ${run}`;
  if (commit.proof === 'failing') return `${made}, still failing in ${run}`;
  if (commit.proof === 'not_run') return `${made}; ${run} did not run the approved tests`;
  if (commit.rerun_number !== null) return `${made}; rerun #${commit.rerun_number} proving them`;
  return `${made}, awaiting the next run to prove them`;
}
