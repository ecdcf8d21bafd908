import path from 'node:path';
import { type RunEnvironmentInput, runEnvironment } from './environment.ts';
import { checkout, currentBranch, installDependencies, type Repository } from './repository.ts';
import { handOver, type Runner, runnerEnvironment } from './sandbox.ts';

// What the executor and the agent both do before a suite runs: check the environment's repository
// out (or take a folder as it is), hand it to the runner user, install its dependencies, and make
// the suite's environment.

export interface Workspace {
  dir: string;
  headSha: string | null;
  /** The branch checked out; null when detached or not a git checkout. */
  branch: string | null;
  /** A checkout of its own (a clone), to remove at its end; not a project's own folder. */
  ownCheckout: boolean;
}

/**
 * The repository checked out into `<workRoot>/runs/<folder>` (at `commit` when given), handed to the
 * runner, its dependencies installed (their cache under `<workRoot>/dependencies`).
 */
export async function checkOutAndInstall(
  input: { repository: Repository; branch: string | null; commit: string | null; workRoot: string; folder: string; runner: Runner },
  log: (line: string) => void,
): Promise<Workspace> {
  const { repository, runner } = input;
  const { dir, headSha } = await checkout(repository, input.branch, input.workRoot, input.folder, repository.kind === 'git' ? input.commit : null);
  // Read before the checkout is handed to the runner user: git refuses a folder another user owns.
  const branch = input.branch ?? (await currentBranch(dir));
  const ownCheckout = repository.kind === 'git';
  if (ownCheckout) await handOver(runner, dir);
  await installDependencies(dir, log, { ownFolder: !ownCheckout, runner, cacheRoot: path.join(input.workRoot, 'dependencies') });
  return { dir, headSha, branch, ownCheckout };
}

/** An environment the suite cannot run in: an env file that is not there, an override that is refused. */
export class SuiteEnvironmentError extends Error {}

/** The suite's environment on the runner's clean one; refused as a whole when an env file is missing or an override is refused. */
export function suiteEnvironment(runner: Runner, input: Omit<RunEnvironmentInput, 'base'>): NodeJS.ProcessEnv {
  const { env, missingFiles, refused } = runEnvironment({ ...input, base: runnerEnvironment(runner, process.env) });
  if (missingFiles.length > 0) throw new SuiteEnvironmentError(`env files not found in the repository: ${missingFiles.join(', ')}`);
  if (refused.length > 0) throw new SuiteEnvironmentError(`environment variable overrides not allowed: ${refused.join(', ')}`);
  return env;
}
