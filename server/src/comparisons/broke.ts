import type { TimelineRow } from './store.ts';

// When a test broke, per environment and branch: a pure fold of its runs, newest first.

export interface RunPoint {
  test_run_id: number;
  /** What pages name the run by: its number in the project. */
  test_run_number: number;
  commit: string | null;
  run_at: Date;
}

export interface BrokeWhen {
  environment_id: number;
  environment_name: string;
  branch: string | null;
  latest: RunPoint & { outcome: TimelineRow['outcome'] };
  /** The last run where it passed (or passed on a retry); null when none is in the history read. */
  last_pass: RunPoint | null;
  /** The first run of the failures it is in now; null when it passes now. */
  first_failure: RunPoint | null;
  /** Runs it failed from its first failure on (the current streak). */
  failed_runs: number;
}

export interface GroupSeen {
  failure_group_id: string;
  title: string;
  first: RunPoint;
  last: RunPoint;
  runs: number;
}

const point = (row: TimelineRow): RunPoint => ({ test_run_id: row.test_run_id, test_run_number: row.test_run_number, commit: row.commit, run_at: row.run_at });
const passed = (row: TimelineRow) => row.outcome === 'passed' || row.outcome === 'flaky';

/** Per environment and branch, newest first by its latest run: how the test ends now, and when it started failing. */
export function brokeWhen(timeline: TimelineRow[]): BrokeWhen[] {
  const lines = new Map<string, TimelineRow[]>();
  for (const row of timeline.filter((candidate) => candidate.outcome !== 'skipped')) {
    const key = `${row.environment_id}\u0000${row.branch ?? ''}`;
    lines.set(key, [...(lines.get(key) ?? []), row]);
  }
  return [...lines.values()].map((runs) => {
    const latest = runs[0] as TimelineRow;
    const streak = runs.findIndex(passed);
    const failing = streak === -1 ? runs : runs.slice(0, streak);
    return {
      environment_id: latest.environment_id,
      environment_name: latest.environment_name,
      branch: latest.branch,
      latest: { ...point(latest), outcome: latest.outcome },
      last_pass: streak === -1 ? null : point(runs[streak] as TimelineRow),
      first_failure: failing.length === 0 ? null : point(failing[failing.length - 1] as TimelineRow),
      failed_runs: failing.length,
    };
  });
}

/** The failure groups the test failed in, most recently seen first, each with its first and last run. */
export function groupsOverTime(timeline: TimelineRow[]): GroupSeen[] {
  const groups = new Map<string, GroupSeen>();
  for (const row of timeline) {
    if (!row.failure_group_id || row.outcome !== 'failed') continue;
    const seen = groups.get(row.failure_group_id);
    if (seen) groups.set(row.failure_group_id, { ...seen, first: point(row), runs: seen.runs + 1 });
    else
      groups.set(row.failure_group_id, {
        failure_group_id: row.failure_group_id,
        title: row.failure_group_title ?? row.failure_group_id,
        first: point(row),
        last: point(row),
        runs: 1,
      });
  }
  return [...groups.values()];
}
