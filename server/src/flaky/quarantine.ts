import { DAY_MS } from '../context.ts';
import type { Tx } from '../db.ts';
import { createSnooze, updateSnooze } from '../snoozes/index.ts';
import type { QuarantinePolicy } from './schema.ts';
import * as store from './store.ts';
import type { EndedRun } from './store.ts';
import { WINDOW_DAYS } from './window.ts';

/**
 * What the quarantine policy does once a run has been added to the flakiness rollup: it records
 * the releases of quarantines that expired, releases quarantined tests of the run's environment
 * after enough clean runs in a row, and (mode `auto`) quarantines the run's tests whose score
 * crossed the threshold, within the cap. Broken and unknown tests are never quarantined.
 */
export async function applyQuarantinePolicy(sql: Tx, run: EndedRun, now: Date): Promise<void> {
  await recordExpiries(sql, run.project_id, now);
  const policy = await store.getPolicy(sql, run.project_id);
  await releaseCleanTests(sql, run, policy, now);
  if (policy.mode === 'auto') await quarantineFlakyTests(sql, run, policy, now);
}

/** A quarantine that ran out by its date is released then: the event carries the expiry's time. */
async function recordExpiries(sql: Tx, projectId: number, now: Date): Promise<void> {
  for (const expired of await store.expiredUnreleased(sql, projectId, now)) {
    await store.recordEvent(sql, projectId, {
      environmentId: expired.environment_id,
      testCaseId: expired.test_case_id,
      action: 'released',
      reason: 'the quarantine expired',
      snoozeId: expired.snooze_id,
      at: expired.expired_at,
    });
  }
}

async function releaseCleanTests(sql: Tx, run: EndedRun, policy: QuarantinePolicy, now: Date): Promise<void> {
  const needed = policy.release_after_clean_runs;
  for (const quarantine of await store.activeQuarantines(sql, run.project_id, run.environment_id, now)) {
    const outcomes = await store.outcomesSince(sql, run.environment_id, quarantine.test_case_id, quarantine.since, needed);
    if (outcomes.length < needed || outcomes.some((outcome) => outcome !== 'passed')) continue;
    await updateSnooze(sql, run.project_id, quarantine.snooze_id, { snooze_until: now }, now);
    await store.recordEvent(sql, run.project_id, {
      environmentId: run.environment_id,
      testCaseId: quarantine.test_case_id,
      action: 'released',
      reason: `passed its last ${needed} runs in a row (release_after_clean_runs ${needed})`,
      snoozeId: quarantine.snooze_id,
      at: now,
    });
  }
}

async function quarantineFlakyTests(sql: Tx, run: EndedRun, policy: QuarantinePolicy, now: Date): Promise<void> {
  // Every flaky test of the environment, not only this run's: one may cross by reaching the
  // minimum of runs, or by its clean runs leaving the window.
  // The kept window starts where afterRunRolledUp put it, on today's window.
  const { rows } = await store.keptWindow(sql, run.project_id, {
    environmentId: run.environment_id,
    class: 'flaky',
    now,
    limit: 100_000,
    offset: 0,
  });
  const overThreshold = rows.filter((row) => row.score >= policy.threshold && !row.quarantined && row.last_flaky_run_id !== null);
  const released = await store.releasedSinceLastFlaky(
    sql,
    run.project_id,
    run.environment_id,
    overThreshold as { test_case_id: string; last_flaky_run_id: number }[],
  );
  const candidates = overThreshold.filter((row) => !released.has(row.test_case_id));
  if (candidates.length === 0) return;
  const cap = Math.floor((policy.cap_percent / 100) * (await store.lastCompleteRunSize(sql, run.environment_id)));
  const active = (await store.activeQuarantines(sql, run.project_id, run.environment_id, now)).length;
  const until = new Date(now.getTime() + policy.expiry_days * DAY_MS);
  // Highest score first: the rows come ordered so.
  for (const test of candidates.slice(0, Math.max(0, cap - active))) {
    const reason =
      `flaky in ${test.flaky_runs} of ${test.runs_counted} runs over the last ${WINDOW_DAYS} days ` +
      `(score ${test.score.toFixed(2)}, threshold ${policy.threshold})`;
    const snooze = await createSnooze(
      sql,
      run.project_id,
      {
        testIds: [test.test_case_id],
        snoozeUntil: until,
        description: `Quarantined by the quarantine policy: ${reason}. Released after ${policy.release_after_clean_runs} clean runs in a row, or on ${until.toISOString().slice(0, 10)}.`,
        createdBy: null,
        environmentId: run.environment_id,
        createdFromRunId: run.id,
        source: 'auto',
      },
      now,
    );
    await store.recordEvent(sql, run.project_id, {
      environmentId: run.environment_id,
      testCaseId: test.test_case_id,
      action: 'quarantined',
      reason,
      snoozeId: snooze.id,
      at: now,
    });
  }
}
