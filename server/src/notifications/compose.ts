import { type FailedStep, type FailureCategory, failureCategory } from '../failuregroups/index.ts';
import type { Tx } from '../db.ts';

// What a notification says of a run's ending, whatever the destination: the run, its failures each
// labelled, and whom to mention.

export const FAILURE_LABELS = ['new', 'known', 'flaky', 'snoozed'] as const;
export type FailureLabel = (typeof FAILURE_LABELS)[number];

export interface EndedRunView {
  id: number;
  /** The run's number in its project: what a message names it by (its link carries the id). */
  number: number;
  project_id: number;
  project_name: string;
  state: string;
  environment_slug: string;
  environment_name: string;
  branch: string | null;
  commit: string | null;
  build_url: string | null;
  /** The page of the CI job that ran or reported the run (what its CI said), else its build's URL; null without either. */
  ci_job_url: string | null;
  scm_actor: string | null;
  total_count: number;
  success_count: number;
  failed_count: number;
  flaky_count: number;
  skipped_count: number;
  snoozed_count: number;
  duration: number | null;
  run_ended_at: string | null;
  summary_url: string;
}

export interface LabelledFailure {
  test_case_id: string;
  title: string;
  file_path: string;
  runner_project: string;
  label: FailureLabel;
  error_message: string | null;
  failure_group_id: string | null;
  /** The failure group's title: what the failure is, as people name it. */
  failure_group_title: string | null;
  /** The failure's kind: assertion, locator, timeout… */
  failure_category: FailureCategory;
}

export interface RunStory {
  run: EndedRunView;
  failures: LabelledFailure[];
  /** The chat account (its user id) of the person who triggered the run, when the run failed and they linked one. */
  mention: string | null;
}

const LABEL_ORDER: Record<FailureLabel, number> = { new: 0, known: 1, flaky: 2, snoozed: 3 };

/** The run's story from the database, its page's link from `runUrl`. */
export async function composeStory(sql: Tx, runId: number, runUrl: (runId: number) => string): Promise<RunStory> {
  const [run] = await sql<(Omit<EndedRunView, 'summary_url' | 'run_ended_at'> & { environment_id: number; run_ended_at: Date | null })[]>`
    select r.id, r.number, r.project_id, p.name as project_name, r.state, e.slug as environment_slug, e.name as environment_name, r.environment_id,
           coalesce(r.build_branch, r.test_run_branch) as branch, coalesce(r.test_run_head_sha, r."commit") as "commit", r.build_url,
           coalesce(r.metadata->>'ci_build_url', r.build_url) as ci_job_url, r.scm_actor,
           r.total_count, r.success_count, r.failed_count, r.flaky_count, r.skipped_count, r.snoozed_count, r.duration, r.run_ended_at
    from test_runs r join environments e on e.id = r.environment_id join projects p on p.id = r.project_id
    where r.id = ${runId}`;
  if (!run) throw new Error(`test run ${runId} is gone`);
  const { environment_id: environmentId, run_ended_at: endedAt, ...view } = run;
  const failures = await labelledFailures(sql, run.project_id, environmentId, runId);
  const mention = run.state === 'failed' || run.state === 'error' ? await chatAccountOf(sql, run.scm_actor) : null;
  return { run: { ...view, run_ended_at: endedAt?.toISOString() ?? null, summary_url: runUrl(runId) }, failures, mention };
}

/**
 * The run's failed and flaky tests: a failure is `known` when its failure group (or, without one,
 * the test itself) failed in an earlier run of this environment, else `new`; a snoozed failure is
 * `snoozed`, a test that passed on a retry `flaky`. New ones first.
 */
async function labelledFailures(sql: Tx, projectId: number, environmentId: number, runId: number): Promise<LabelledFailure[]> {
  const rows = await sql<
    (Omit<LabelledFailure, 'label' | 'failure_category'> & { outcome: string; snoozed: boolean; seen_before: boolean; failed_steps: FailedStep[] | null })[]
  >`
    select t.test_case_id, coalesce(l.title, t.test_case_id) as title, coalesce(l.file_path, '') as file_path,
           coalesce(l.runner_project, '') as runner_project, t.outcome, t.snoozed, t.final_error_message as error_message, t.failure_group_id,
           g.title as failure_group_title, t.failed_steps,
           case when t.failure_group_id is not null then exists (
                  select 1 from failure_group_events ev
                  where ev.project_id = ${projectId} and ev.group_id = t.failure_group_id and ev.test_run_id < ${runId}
                    and ev.environment_id = ${environmentId} and ev.kind in ('attach', 'sighting'))
                else coalesce((
                  select before.outcome = 'failed' from test_runs r2
                  join test_results before on before.test_run_id = r2.id and before.test_case_id = t.test_case_id and before.is_final
                  where r2.environment_id = ${environmentId} and r2.id < ${runId}
                  order by r2.id desc limit 1), false)
           end as seen_before
    from test_results t
    left join test_run_tests l on l.test_run_id = t.test_run_id and l.test_case_id = t.test_case_id
    left join failure_groups g on t.failure_group_id is not null and g.project_id = ${projectId} and g.id = t.failure_group_id
    where t.test_run_id = ${runId} and t.is_final and t.outcome in ('failed', 'flaky')`;
  return rows
    .map(({ outcome, snoozed, seen_before: seenBefore, failed_steps: steps, ...failure }) => ({
      ...failure,
      failure_category: failureCategory({ message: failure.error_message, steps: steps ?? [] }),
      label: (outcome === 'flaky' ? 'flaky' : snoozed ? 'snoozed' : seenBefore ? 'known' : 'new') as FailureLabel,
    }))
    .sort((a, b) => LABEL_ORDER[a.label] - LABEL_ORDER[b.label] || a.file_path.localeCompare(b.file_path) || a.title.localeCompare(b.title));
}

/** The chat user id linked to the user `actor` names: by user id, or by a linked SCM account's username or id. */
async function chatAccountOf(sql: Tx, actor: string | null): Promise<string | null> {
  if (!actor) return null;
  const [row] = await sql<{ chat_user_id: string }[]>`
    select c.account->>'user_id' as chat_user_id from connected_accounts c
    where c.kind = 'chat' and c.user_id in (
      select u.id from users u where u.id = ${actor}
      union
      select s.user_id from connected_accounts s where s.kind = 'scm' and (s.account->>'username' = ${actor} or s.account->>'user_id' = ${actor}))
    order by c.id limit 1`;
  return row?.chat_user_id ?? null;
}
