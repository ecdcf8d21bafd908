// The agent's plan of a run from Playwright's listing: files per runner project, fully parallel
// tests apart, setup and teardown projects left to run with their dependents.
import { describe, expect, it } from 'vitest';
import { planUnits } from '../../reporter/src/agent/units.ts';
import type { Listing } from '../../reporter/src/toolchain/playwright.ts';

function listed(n: number, runner_project: string, file: string, parallel = false, tags: string[] = []): Listing['tests'][number] {
  const id = `${n.toString(16).padStart(20, '0')}-${'c'.repeat(20)}`;
  return { id, title: `t${n}`, file_path: file, file, suites: [], runner_project, tags, line: n, column: 1, titles: [`t${n}`], parallel };
}

const listing: Listing = {
  projects: ['setup', 'cleanup', 'chromium', 'firefox'],
  dependencies: { setup: [], cleanup: [], chromium: ['setup'], firefox: [] },
  teardowns: { setup: 'cleanup' },
  tests: [
    listed(1, 'setup', 'auth.setup.ts'),
    listed(2, 'cleanup', 'auth.teardown.ts'),
    listed(3, 'chromium', 'a.spec.ts'),
    listed(4, 'chromium', 'a.spec.ts'),
    listed(5, 'chromium', 'b.spec.ts', true),
    listed(6, 'chromium', 'b.spec.ts', true, ['@smoke']),
    listed(7, 'firefox', 'a.spec.ts'),
  ],
};

const filter = { match: [], ignore: [], tags: [], testIds: [] };
const shape = (units: ReturnType<typeof planUnits>) => units.map((unit) => [unit.runner_project, unit.file, unit.tests.length]);

describe('the units of a run', () => {
  it('when a suite has setup projects, files of default mode and fully parallel files, then each file is a unit per project, each parallel test its own, and setup runs with its dependents', () => {
    const units = planUnits(listing, filter);
    expect(shape(units)).toEqual([
      ['chromium', 'a.spec.ts', 2],
      ['chromium', 'b.spec.ts', 1],
      ['chromium', 'b.spec.ts', 1],
      ['firefox', 'a.spec.ts', 1],
    ]);
    expect(units[0]?.tests[0]).toEqual({ id: listed(3, '', '').id, line: '[chromium] › a.spec.ts › t3' });
  });

  it('when no selected project depends on the setup project, then its tests are units as any others', () => {
    expect(shape(planUnits(listing, { ...filter, match: ['setup', 'firefox'] }))).toEqual([
      ['setup', 'auth.setup.ts', 1],
      ['firefox', 'a.spec.ts', 1],
    ]);
  });

  it('when the run has tags or test ids, then only their tests make units', () => {
    expect(shape(planUnits(listing, { ...filter, tags: ['smoke'] }))).toEqual([['chromium', 'b.spec.ts', 1]]);
    expect(shape(planUnits(listing, { ...filter, testIds: [listed(4, '', '').id, listed(7, '', '').id] }))).toEqual([
      ['chromium', 'a.spec.ts', 1],
      ['firefox', 'a.spec.ts', 1],
    ]);
  });

  it('when splitting parallel files would pass the most units a run has, then they stay whole', () => {
    const many: Listing = {
      projects: ['p'],
      dependencies: { p: [] },
      teardowns: {},
      tests: Array.from({ length: 1200 }, (_, i) => listed(i, 'p', `f${i % 10}.spec.ts`, true)),
    };
    expect(planUnits(many, filter)).toHaveLength(10);
  });
});
