import { type FailureCategory, failureCategory } from '../failuregroups/index.ts';
import type { Tx } from '../db.ts';
import { chatAccountOf, failuresOfRun, type RunFailureRow, type StoryRun, storyRunOf } from './store.ts';

// What a notification says of a run's ending, whatever the destination: the run, its failures each
// labelled, and whom to mention.

export const FAILURE_LABELS = ['new', 'known', 'flaky', 'snoozed'] as const;
export type FailureLabel = (typeof FAILURE_LABELS)[number];

/** A run as a message tells it, with its page's link. */
export type EndedRunView = Omit<StoryRun, 'environment_id' | 'run_ended_at'> & { run_ended_at: string | null; summary_url: string };

/** A failed or flaky test of a run, as a message lists it. */
export type LabelledFailure = Omit<RunFailureRow, 'outcome' | 'snoozed' | 'failed_steps' | 'seen_before'> & {
  label: FailureLabel;
  /** The failure's kind: assertion, locator, timeout… */
  failure_category: FailureCategory;
};

export interface RunStory {
  run: EndedRunView;
  failures: LabelledFailure[];
  /** The chat account (its user id) of the person who triggered the run, when the run failed and they linked one. */
  mention: string | null;
  /** The run's visual review page, which the pull/merge request comment links to; absent: not linked. */
  visual_review_url?: string | null;
}

const LABEL_ORDER: Record<FailureLabel, number> = { new: 0, known: 1, flaky: 2, snoozed: 3 };

/** The run's story from the database, its page's link from `runUrl` (and its visual review page's from `pageUrl`). */
export async function composeStory(sql: Tx, runId: number, runUrl: (runId: number) => string, pageUrl?: (path: string) => string): Promise<RunStory> {
  const run = await storyRunOf(sql, runId);
  if (!run) throw new Error(`test run ${runId} is gone`);
  const { environment_id: environmentId, run_ended_at: endedAt, ...view } = run;
  const failures = await labelledFailures(sql, run.project_id, environmentId, runId);
  const mention = run.state === 'failed' || run.state === 'error' ? await chatAccountOf(sql, run.scm_actor) : null;
  const visualReviewUrl = pageUrl ? pageUrl(`/projects/${run.project_id}/runs/${runId}/visual`) : null;
  return { run: { ...view, run_ended_at: endedAt?.toISOString() ?? null, summary_url: runUrl(runId) }, failures, mention, visual_review_url: visualReviewUrl };
}

/**
 * The run's failed and flaky tests: a failure is `known` when its failure group (or, without one,
 * the test itself) failed in an earlier run of this environment, else `new`; a snoozed failure is
 * `snoozed`, a test that passed on a retry `flaky`. New ones first.
 */
async function labelledFailures(sql: Tx, projectId: number, environmentId: number, runId: number): Promise<LabelledFailure[]> {
  const rows = await failuresOfRun(sql, projectId, environmentId, runId);
  return rows
    .map(({ outcome, snoozed, seen_before: seenBefore, failed_steps: steps, ...failure }) => ({
      ...failure,
      failure_category: failureCategory({ message: failure.error_message, steps: steps ?? [] }),
      label: (outcome === 'flaky' ? 'flaky' : snoozed ? 'snoozed' : seenBefore ? 'known' : 'new') as FailureLabel,
    }))
    .sort((a, b) => LABEL_ORDER[a.label] - LABEL_ORDER[b.label] || a.file_path.localeCompare(b.file_path) || a.title.localeCompare(b.title));
}
