import type { Tx } from '../db.ts';
import type { AffectedBase, RunSelection } from './schema.ts';
import { affectedRunsInARow, lastPassingRun, testsToRunAgain } from './store.ts';

/**
 * What an affected run on `branch` starts from: the environment's last passing run there (its
 * commit is what Playwright's `--only-changed` compares with), the tests that failed or were flaky
 * since, and whether `full_run_every` makes this one a full run. `beforeRunId`: the run asking,
 * which is not its own base.
 */
export async function affectedBase(
  sql: Tx,
  environment: { id: number; full_run_every: number | null },
  branch: string | null,
  beforeRunId: number | null,
): Promise<AffectedBase> {
  if (!branch) return { base: null, full_run_due: null, tests: [] };
  const [base, inARow] = await Promise.all([
    lastPassingRun(sql, environment.id, branch, beforeRunId),
    environment.full_run_every === null ? Promise.resolve(0) : affectedRunsInARow(sql, environment.id, branch, beforeRunId),
  ]);
  const every = environment.full_run_every;
  const fullRunDue =
    every !== null && inARow >= every ? `a full run is due: ${inARow} affected runs in a row since the last full run (full_run_every ${every})` : null;
  const tests = base ? await testsToRunAgain(sql, environment.id, branch, base.run_id, beforeRunId) : [];
  return { base, full_run_due: fullRunDue, tests };
}

/** Why an affected run runs every test before Playwright is asked anything; null when it may select. */
export function reasonForAll(base: AffectedBase, branch: string | null): string | null {
  if (base.full_run_due) return base.full_run_due;
  if (!branch) return 'the run has no branch, so there is no last passing run to compare with';
  if (!base.base) return `the environment has no passing run on branch "${branch}" with a known commit to compare with`;
  return null;
}

/** The run page's and the CLI's line for a selection. */
export function describeSelection(selection: RunSelection): string {
  const base = selection.base_commit ? selection.base_commit.slice(0, 12) : null;
  if (selection.mode === 'affected') {
    const tests = `${selection.left_out} test${selection.left_out === 1 ? '' : 's'}`;
    return `${tests} left out: not affected by changes since ${base ?? 'the last passing run'}`;
  }
  return `Every test ran although the run asked for the affected ones: ${selection.reason ?? 'no reason was recorded'}`;
}
