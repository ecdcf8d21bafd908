import { attachmentsByTest } from '../artifacts/index.ts';
import type { AppDeps } from '../context.ts';
import type { Tx } from '../db.ts';
import type { SummaryDetail } from './schema.ts';
import { failureCategory } from '../failuregroups/index.ts';
import { countsByRunnerProject, failedIn, getSummaryDetails, previousRun, type ProjectCount, type RunRow, type StoredDetail } from './store.ts';

/** A stored test as the API and the pages show it: a failure with its category. */
function presented({ failed_steps: steps, ...detail }: StoredDetail): Omit<SummaryDetail, 'attachments'> {
  const failing = detail.status === 'failed' || detail.status === 'flaky';
  return { ...detail, failure_category: failing ? failureCategory({ message: detail.error_message, steps: steps ?? [] }) : null };
}

/** A run's tests as the API and the run page show them: each with its attachments, their URLs signed from `now`. */
export async function runDetails(sql: Tx, deps: Pick<AppDeps, 'config' | 'signingSecret'>, runId: number, now: Date): Promise<SummaryDetail[]> {
  const attachments = await attachmentsByTest(sql, deps, runId, now);
  return (await getSummaryDetails(sql, runId)).map((detail) => ({ ...presented(detail), attachments: attachments.get(detail.test_case_id) ?? [] }));
}

/** What a run's page shows: every failed and flaky test, the first of the others, and the counts. */
export interface RunPageDetails {
  tests: SummaryDetail[];
  /** Passed and skipped tests left out of `tests`. */
  hidden: number;
  breakdown: ProjectCount[];
  /** The previous run of the environment and branch, and which of this run's failed tests failed there too. */
  previous: { id: number; number: number; failed: Set<string> } | null;
}

/** Passed and skipped tests a run's page lists before it offers the rest. */
export const PAGE_OTHERS = 200;

export async function runPageDetails(sql: Tx, deps: Pick<AppDeps, 'config' | 'signingSecret'>, run: RunRow, now: Date, all: boolean): Promise<RunPageDetails> {
  const failing = run.failed_count + run.flaky_count;
  const limit = all ? null : failing + PAGE_OTHERS;
  const [attachments, details, breakdown, before] = await Promise.all([
    attachmentsByTest(sql, deps, run.id, now),
    getSummaryDetails(sql, run.id, limit),
    countsByRunnerProject(sql, run.id),
    previousRun(sql, run),
  ]);
  const tests = details.map((detail) => ({ ...presented(detail), attachments: attachments.get(detail.test_case_id) ?? [] }));
  const total = breakdown.reduce((sum, row) => sum + row.count, 0);
  const failedNow = tests.filter((test) => test.status === 'failed').map((test) => test.test_case_id);
  const previous = before === null ? null : { ...before, failed: await failedIn(sql, before.id, failedNow) };
  return { tests, hidden: Math.max(0, total - tests.length), breakdown, previous };
}
