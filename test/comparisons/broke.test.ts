import { describe, expect, it } from 'vitest';
import { brokeWhen, groupsOverTime } from '../../server/src/comparisons/broke.ts';
import type { TimelineRow } from '../../server/src/comparisons/store.ts';

// A test's runs, newest first, as the timeline reads them.
let next = 100;
const run = (outcome: TimelineRow['outcome'], fields: Partial<TimelineRow> = {}): TimelineRow => ({
  test_run_id: next,
  test_run_number: next--,
  environment_id: 1,
  environment_name: 'staging',
  branch: 'main',
  commit: `c${next}`,
  run_at: new Date(Date.UTC(2026, 10, 1, 0, next)),
  outcome,
  failure_group_id: null,
  failure_group_title: null,
  ...fields,
});

describe('when a test broke', () => {
  it('when it fails now after passing, then the first failure of the streak and the last pass are given, skipped runs aside', () => {
    next = 100;
    const timeline = [run('failed'), run('skipped'), run('failed'), run('failed'), run('flaky'), run('failed'), run('passed')];
    const [line] = brokeWhen(timeline);
    expect(line).toMatchObject({
      environment_name: 'staging',
      branch: 'main',
      latest: { test_run_id: 100, outcome: 'failed' },
      first_failure: { test_run_id: 97 },
      last_pass: { test_run_id: 96, commit: 'c95' },
      failed_runs: 3,
    });
  });

  it('when it passes now, then there is no first failure; when it never passed, there is no last pass', () => {
    next = 100;
    const passing = brokeWhen([run('passed'), run('failed')]);
    expect(passing[0]).toMatchObject({ first_failure: null, last_pass: { test_run_id: 100 }, failed_runs: 0 });
    const never = brokeWhen([run('failed'), run('failed')]);
    expect(never[0]).toMatchObject({ first_failure: { test_run_id: 97 }, last_pass: null, failed_runs: 2 });
  });

  it('when it runs in two environments and branches, then each has its own line', () => {
    next = 100;
    const lines = brokeWhen([
      run('failed', { branch: 'feature' }),
      run('passed', { environment_id: 2, environment_name: 'production' }),
      run('passed', { branch: 'feature' }),
      run('failed'),
    ]);
    expect(lines.map((line) => [line.environment_name, line.branch, line.failed_runs])).toEqual([
      ['staging', 'feature', 1],
      ['production', 'main', 0],
      ['staging', 'main', 1],
    ]);
  });

  it('when its failures fell in failure groups, then each group is given with its first and last failed run, newest group first', () => {
    next = 100;
    const group = (id: string) => ({ failure_group_id: id, failure_group_title: `title of ${id}` });
    const seen = groupsOverTime([
      run('failed', group('fg_b')),
      run('passed'),
      run('failed', group('fg_a')),
      run('failed', group('fg_b')),
      run('failed', group('fg_a')),
    ]);
    expect(seen.map((g) => [g.title, g.last.test_run_id, g.first.test_run_id, g.runs])).toEqual([
      ['title of fg_b', 100, 97, 2],
      ['title of fg_a', 98, 96, 2],
    ]);
  });
});
