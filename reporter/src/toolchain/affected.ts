import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { RunnerListedTest } from '@proctor/reporter/list';
import { type Listing, ListingError, listTests, playwrightVersion } from './playwright.ts';
import { type Runner, runnerSpawnOptions } from './sandbox.ts';

// Affected runs (issue 56, point 3): the tests a change can break are the ones Playwright's own
// `--only-changed=<base>` lists (their spec files, or files they import, changed since the base
// commit), plus the tests to run again (failed or flaky since the base). Whenever that cannot be
// told, every test runs and the reason is kept on the run.

/** Playwright has `--only-changed` from 1.46; Proctor's peer range starts at 1.42. */
export function hasOnlyChanged(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return major > 1 || (major === 1 && minor >= 46);
}

/** Whether the checkout holds `commit` (a shallow clone may not), asked as the runner: git refuses a folder another user owns. */
async function hasCommit(dir: string, env: NodeJS.ProcessEnv, runner: Runner, commit: string): Promise<boolean> {
  try {
    await promisify(execFile)('git', ['cat-file', '-e', `${commit}^{commit}`], { ...runnerSpawnOptions(runner), cwd: dir, env, timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

export type ChangedTests = { kind: 'known'; ids: Set<string> } | { kind: 'unknown'; reason: string };

/**
 * The tests whose spec file, or a file it imports, changed since `base`, as Playwright's own
 * `--only-changed` lists them; or why that cannot be told (an older Playwright, a base that is not
 * a commit or not in the clone, a listing that failed).
 */
export async function changedTests(input: Pick<AffectedInput, 'dir' | 'env' | 'runner' | 'playwrightArgs' | 'base'>): Promise<ChangedTests> {
  const { dir, env, runner, base } = input;
  const version = playwrightVersion(dir, runner);
  if (!hasOnlyChanged(version)) return { kind: 'unknown', reason: `the suite's Playwright ${version} has no --only-changed (1.46 and later)` };
  // Named after `--only-changed=`, so a value that looks like an option could not become one; still, a commit is hex.
  if (!/^[0-9a-f]{7,64}$/i.test(base)) return { kind: 'unknown', reason: `the base commit "${base}" is not a commit id` };
  const short = base.slice(0, 12);
  if (!(await hasCommit(dir, env, runner, base))) {
    return { kind: 'unknown', reason: `the base commit ${short} is not in the test repository's clone (a shallow clone, or history rewritten)` };
  }
  try {
    const changed = await listTests(dir, env, runner, [...input.playwrightArgs, `--only-changed=${base}`]);
    return { kind: 'known', ids: new Set(changed.tests.map((test) => test.id)) };
  } catch (error) {
    if (!(error instanceof ListingError)) throw error;
    return { kind: 'unknown', reason: `Playwright could not list the tests changed since ${short}: ${error.message}` };
  }
}

export type AffectedChoice = { kind: 'affected'; tests: RunnerListedTest[] } | { kind: 'all'; reason: string };

export interface AffectedInput {
  dir: string;
  env: NodeJS.ProcessEnv;
  runner: Runner;
  /** The environment's Playwright arguments, which the listing of the changed tests gets as the full listing did. */
  playwrightArgs: readonly string[];
  /** Every test of the suite. */
  listing: Listing;
  /** The commit the changes are measured from. */
  base: string;
  /** Tests to run whatever changed: ids as Proctor (and the listing) knows them. */
  again: ReadonlySet<string>;
}

/**
 * The tests of `listing` that a change since `base` can affect, with the ones to run again; or why
 * every test must run (an older Playwright, a base the clone lacks, a listing that failed).
 */
export async function chooseAffected(input: AffectedInput): Promise<AffectedChoice> {
  const changed = await changedTests(input);
  if (changed.kind === 'unknown') return { kind: 'all', reason: changed.reason };
  const chosen = new Set([...changed.ids, ...input.again]);
  return { kind: 'affected', tests: input.listing.tests.filter((test) => chosen.has(test.id)) };
}
