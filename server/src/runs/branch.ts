import type { Branches } from '@proctor/reporter/toolchain/repository';

/** The branch a run runs: `branch` when given; else the build's branch when the repository has it; else the default branch. */
export function resolveBranch(found: Branches, branch: string | null, buildBranch: string | null): string | null {
  if (branch) return branch;
  if (buildBranch && found.branches.has(buildBranch)) return buildBranch;
  return found.defaultBranch;
}

/** The branch a run is for, as people name it: the CI's (or the one asked for), else the test repository's. */
export function shownBranch(run: { build_branch: string | null; test_run_branch: string | null }): string | null {
  return run.build_branch ?? run.test_run_branch;
}

/**
 * Why a triggered run's tests ran from another branch than the one it is for: the test repository
 * has no such branch, so its default branch ran (the rule for the CI's branch and "Run now" alike).
 */
export function branchNote(run: { origin: string; build_branch: string | null; test_run_branch: string | null }): string | null {
  if (run.origin === 'reporter' || !run.build_branch || !run.test_run_branch || run.build_branch === run.test_run_branch) return null;
  return `The test repository has no branch "${run.build_branch}": its tests ran from "${run.test_run_branch}".`;
}
