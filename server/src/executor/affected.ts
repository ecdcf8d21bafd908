import type { Logger } from 'pino';
import type { Sql } from '../db.ts';
import { affectedBase, reasonForAll, recordSelection, type RunSelection } from '../selection/index.ts';
import type { ClaimedRun } from '../runs/index.ts';
import { hasTestList, isSelected, type Listing, type Selection } from '@proctor/reporter/toolchain/playwright';
import { chooseAffected } from '@proctor/reporter/toolchain/affected';
import type { Runner } from '@proctor/reporter/toolchain/sandbox';

/**
 * An affected run's tests (issue 56, point 3): those Playwright finds affected by the changes since
 * the environment's last passing run on the branch, plus the tests that failed or were flaky since,
 * within what the run selects anyway (its projects, tags, test ids). Records the run's selection,
 * `all` with its reason when that cannot be told. Returns the selection to run, and the shards'
 * further Playwright arguments.
 */
export async function narrowToAffected(
  sql: Sql,
  claimed: ClaimedRun,
  full_run_every: number | null,
  where: { dir: string; env: NodeJS.ProcessEnv; runner: Runner; version: string; branch: string | null; listing: Listing; selection: Selection },
  log: Logger,
): Promise<{ selection: Selection; extraArgs: string[] }> {
  const { listing, selection, branch } = where;
  const base = await affectedBase(sql, { id: claimed.environment_id, full_run_every }, branch, claimed.id);
  const selected = (tests: Listing['tests']) => tests.filter((test) => isSelected(test, selection, claimed.test_case_ids));
  const record = async (chosen: RunSelection) => {
    await recordSelection(sql, claimed.id, chosen);
    log.info({ selection: chosen }, 'affected run: tests chosen');
  };
  const early = reasonForAll(base, branch);
  const baseFields = { base_commit: base.base?.commit ?? null, base_run_id: base.base?.run_id ?? null };
  if (early || !base.base) {
    await record({ mode: 'all', ...baseFields, reason: early, left_out: 0 });
    return { selection, extraArgs: [] };
  }
  const choice = await chooseAffected({
    dir: where.dir,
    env: where.env,
    runner: where.runner,
    playwrightArgs: claimed.playwright_args,
    listing,
    base: base.base.commit,
    again: new Set(base.tests.map((test) => test.test_case_id)),
  });
  if (choice.kind === 'all') {
    await record({ mode: 'all', ...baseFields, reason: choice.reason, left_out: 0 });
    return { selection, extraArgs: [] };
  }
  const runs = selected(choice.tests);
  const leftOut = selected(listing.tests).length - runs.length;
  if (runs.length === 0 && !hasTestList(where.version)) {
    // Before --test-list, no location at all would run every test.
    const reason = `no test is affected by the changes since ${base.base.commit.slice(0, 12)}, and Playwright ${where.version} cannot be told to run none`;
    await record({ mode: 'all', ...baseFields, reason, left_out: 0 });
    return { selection, extraArgs: [] };
  }
  await record({ mode: 'affected', ...baseFields, reason: null, left_out: leftOut });
  // Nothing affected: the shards start on an empty list and report their end, so the run ends passed with no test.
  return { selection: { ...selection, tests: runs }, extraArgs: runs.length === 0 ? ['--pass-with-no-tests'] : [] };
}
