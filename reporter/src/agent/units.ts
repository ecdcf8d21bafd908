// A run's units from a listing of its suite: a spec file per runner project, or one test where
// Playwright itself would run it apart from its file (a fully parallel file or project). Tests of
// setup and teardown projects are no units of their own: Playwright runs them with every unit of a
// project that depends on them, as it runs them in every shard of `--shard`.
import { isSelected, type Listing, selectTests, testListLine, testLocation } from '../toolchain/playwright.ts';
import { WIRE_LIMITS } from '../api/wire.ts';
import type { PlannedUnit } from './client.ts';

/** Units of one run: each is reported as the run's shard of its number. */
export const MAX_UNITS = WIRE_LIMITS.shards;

export interface RunFilter {
  match: string[];
  ignore: string[];
  tags: string[];
  testIds: string[];
}

type ListedTest = Listing['tests'][number];

export class PlanningError extends Error {}

/**
 * The units of the tests the run selects, in the listing's order. `locations`: the suite's
 * Playwright has no `--test-list`, so a unit names its tests by `file:line:column`; tests written
 * at one place (a loop's) then stay in one unit, as such a location selects them all.
 */
export function planUnits(listing: Listing, filter: RunFilter, locations = false): PlannedUnit[] {
  const selection = selectTests(listing, filter);
  const selected = listing.tests.filter((test) => isSelected(test, selection, filter.testIds));
  const ranWithOthers = projectsRunWith(listing, new Set(selected.map((test) => test.runner_project)));
  const tests = selected.filter((test) => !ranWithOthers.has(test.runner_project));
  let units = group(tests, true, locations);
  // Past the most shards a run has, parallel files stay whole, as a file of default mode does.
  if (units.length > MAX_UNITS) units = group(tests, false, locations);
  if (units.length > MAX_UNITS)
    throw new PlanningError(`the run selects ${units.length} spec files (per runner project); a run of agents has at most ${MAX_UNITS} units`);
  return units;
}

function group(tests: ListedTest[], splitParallel: boolean, locations: boolean): PlannedUnit[] {
  const units = new Map<string, PlannedUnit>();
  for (const test of tests) {
    const apart = splitParallel && test.parallel ? (locations ? testLocation(test) : test.id) : '';
    const key = [test.runner_project, test.file, apart].join('\0');
    const unit = units.get(key) ?? { runner_project: test.runner_project, file: test.file, tests: [] };
    unit.tests.push({ id: test.id, line: locations ? testLocation(test) : testListLine(test) });
    units.set(key, unit);
  }
  return [...units.values()];
}

/**
 * The projects that selected projects depend on (their setup, transitively) and those setups'
 * teardowns, unless nothing selected depends on them.
 */
function projectsRunWith(listing: Listing, selectedProjects: Set<string>): Set<string> {
  const dependencies = listing.dependencies ?? {};
  const teardowns = listing.teardowns ?? {};
  const found = new Set<string>();
  const visit = (project: string) => {
    for (const dependency of dependencies[project] ?? []) {
      if (found.has(dependency)) continue;
      found.add(dependency);
      const teardown = teardowns[dependency];
      if (teardown) found.add(teardown);
      visit(dependency);
    }
  };
  for (const project of selectedProjects) visit(project);
  return found;
}
