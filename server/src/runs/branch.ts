import type { Branches } from '@proctor/reporter/toolchain/repository';

/** The branch a run runs: `branch` when given; else the build's branch when the repository has it; else the default branch. */
export function resolveBranch(found: Branches, branch: string | null, buildBranch: string | null): string | null {
  if (branch) return branch;
  if (buildBranch && found.branches.has(buildBranch)) return buildBranch;
  return found.defaultBranch;
}
