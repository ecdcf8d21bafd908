import { brokeWhen, compareRuns, groupsOverTime, testTimeline } from '../comparisons/index.ts';
import type { AppDeps } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import { foldMembers, getGroup, listGroups, memberEvents } from '../failuregroups/index.ts';
import { composeDigest, type DigestPeriod } from '../digests/index.ts';
import { listSlowerTests } from '../durations/index.ts';
import { getEnvironment } from '../environments/index.ts';
import { type FlakinessClass, rankedFlakyTests, WINDOW_DAYS } from '../flaky/index.ts';
import { failureLocations, getRunById, listRuns, type RunRow, runPageDetails, shownBranch } from '../runs/index.ts';
import { snoozesOfTest } from '../snoozes/index.ts';
import { findTests, getTestCase, testTitles } from '../testcases/index.ts';

// What an assistant reads through MCP: the API's own reads, each answer bounded in size (a page of
// a list, a run's failures but never its every test, errors cut) so that it fits in a context.

type Deps = Pick<AppDeps, 'sql' | 'clock' | 'config' | 'signingSecret'>;

/** An error's text cut for an assistant's context. */
export const ERROR_CHARS = 2000;
/** Failures of a run in one answer of get_run. */
export const FAILURES_PER_PAGE = 20;

const cut = (text: string | null, max = ERROR_CHARS) => (text === null || text.length <= max ? text : `${text.slice(0, max)}… (cut at ${max} characters)`);
const iso = (at: Date | null) => at?.toISOString() ?? null;

export function runPageUrl(deps: Deps, projectId: number, runId: number): string {
  return `${deps.config.publicUrl}/projects/${projectId}/runs/${runId}`;
}

function runSummary(deps: Deps, run: RunRow) {
  return {
    // The id is what tools take; the number (#1 the project's first run) is what people call it.
    id: run.id,
    number: run.number,
    state: run.state,
    environment: run.environment_slug,
    branch: shownBranch(run),
    ci_job_url: run.ci_build_url,
    commit: run.test_run_head_sha ?? run.commit,
    pull_request: run.pull_request,
    counts: {
      total: run.total_count,
      passed: run.success_count,
      failed: run.failed_count,
      flaky: run.flaky_count,
      skipped: run.skipped_count,
      snoozed: run.snoozed_count,
    },
    duration_ms: run.duration,
    created_at: run.created_at.toISOString(),
    ended_at: iso(run.run_ended_at),
    error_reason: cut(run.error_reason ?? run.cancel_reason),
    url: runPageUrl(deps, run.project_id, run.id),
  };
}

export async function readRuns(
  deps: Deps,
  projectId: number,
  input: { environment?: string; branch?: string; state?: string; since?: string; owner?: string; page: number; per_page: number },
) {
  const { rows, total } = await listRuns(deps.sql, projectId, {
    environment: input.environment,
    branch: input.branch,
    owner: input.owner,
    states: input.state ? [input.state] : [],
    since: input.since ? new Date(input.since) : undefined,
    limit: input.per_page,
    offset: (input.page - 1) * input.per_page,
  });
  return { runs: rows.map((run) => runSummary(deps, run)), total, page: input.page, per_page: input.per_page };
}

async function projectRun(deps: Deps, projectId: number, runId: number, field: string): Promise<RunRow> {
  const run = await getRunById(deps.sql, runId);
  if (!run || run.project_id !== projectId) throw new NotFoundError(`${field}: test run ${runId} not found`);
  return run;
}

/** A run: its counts, and a page of its failures (failed, then flaky) with what an assistant needs to fix them. */
export async function readRun(deps: Deps, projectId: number, input: { run_id: number; page: number; owner?: string }, field = 'run_id') {
  const run = await projectRun(deps, projectId, input.run_id, field);
  const details = await runPageDetails(deps.sql, deps, run, deps.clock(), false);
  const failing = details.tests.filter((test) => (test.status === 'failed' || test.status === 'flaky') && (!input.owner || test.owners.includes(input.owner)));
  const shown = failing.slice((input.page - 1) * FAILURES_PER_PAGE, input.page * FAILURES_PER_PAGE);
  const locations = await failureLocations(
    deps.sql,
    run.id,
    shown.map((test) => test.test_case_id),
  );
  const failures = shown.map((test) => ({
    test_case_id: test.test_case_id,
    title: test.title,
    file: test.file_path,
    runner_project: test.runner_project,
    owners: test.owners,
    status: test.status,
    since_previous_run: test.status !== 'failed' || !details.previous ? null : details.previous.failed.has(test.test_case_id) ? 'still failing' : 'new',
    snoozed: test.snoozed,
    category: test.failure_category,
    error: cut(test.error_message),
    location: locations.get(test.test_case_id)?.location ?? null,
    stack: locations.get(test.test_case_id)?.frames ?? [],
    failure_group: test.failure_group_id ? { id: test.failure_group_id, title: test.failure_group_title } : null,
    attachments: test.attachments
      .slice(0, 6)
      .map((attachment) => ({ name: attachment.name, content_type: attachment.content_type, retry: attachment.retry, url: attachment.url })),
    test_url: `${deps.config.publicUrl}/projects/${projectId}/tests/${test.test_case_id}`,
  }));
  return {
    run: runSummary(deps, run),
    previous_run_id: details.previous?.id ?? null,
    failures,
    failures_total: failing.length,
    page: input.page,
    pages: Math.max(1, Math.ceil(failing.length / FAILURES_PER_PAGE)),
  };
}

/** A test: when it broke where, its recent history per environment and branch, flaky score and snoozes. */
export async function readTest(deps: Deps, projectId: number, input: { test_case_id: string }) {
  const test = await getTestCase(deps.sql, projectId, input.test_case_id);
  if (!test) throw new NotFoundError(`test_case_id: test ${input.test_case_id} not found`);
  const now = deps.clock();
  const [timeline, flakiness, snoozes, slower] = await Promise.all([
    testTimeline(deps.sql, projectId, test.id, 1000),
    rankedFlakyTests(deps.sql, projectId, WINDOW_DAYS, { testCaseId: test.id, now, limit: 20, offset: 0 }),
    snoozesOfTest(deps.sql, projectId, test.id),
    listSlowerTests(deps.sql, projectId, { environmentId: null, testCaseId: test.id, limit: 20, offset: 0 }),
  ]);
  return {
    test: { id: test.id, title: test.name, file: test.file_path, runner_project: test.runner_project, tags: test.tags, owners: test.owners },
    per_environment_and_branch: brokeWhen(timeline).map((line) => ({
      environment: line.environment_name,
      branch: line.branch,
      latest: {
        run_id: line.latest.test_run_id,
        run_number: line.latest.test_run_number,
        outcome: line.latest.outcome,
        commit: line.latest.commit,
        at: line.latest.run_at.toISOString(),
      },
      first_failure: line.first_failure && {
        run_id: line.first_failure.test_run_id,
        run_number: line.first_failure.test_run_number,
        commit: line.first_failure.commit,
        at: line.first_failure.run_at.toISOString(),
      },
      last_pass: line.last_pass && {
        run_id: line.last_pass.test_run_id,
        run_number: line.last_pass.test_run_number,
        commit: line.last_pass.commit,
        at: line.last_pass.run_at.toISOString(),
      },
      failed_runs_since: line.failed_runs,
    })),
    recent_outcomes: timeline
      .slice(0, 30)
      .map((row) => ({ run_id: row.test_run_id, environment: row.environment_name, branch: row.branch, outcome: row.outcome })),
    failure_groups: groupsOverTime(timeline).map((group) => ({
      id: group.failure_group_id,
      title: group.title,
      failed_runs: group.runs,
      first_run_id: group.first.test_run_id,
      last_run_id: group.last.test_run_id,
    })),
    flakiness: flakiness.rows.map((row) => ({
      environment_id: row.environment_id,
      score: row.score,
      class: row.class,
      runs_counted: row.runs_counted,
      flaky_runs: row.flaky_runs,
      quarantined: row.quarantined,
    })),
    // Where the test got slower and stayed so (a rank test over its passed durations).
    slower: slower.rows.map((row) => ({
      environment: row.environment_name,
      since_run_id: row.started_run_id,
      since_run_number: row.started_run_number,
      median_before_ms: row.baseline_ms,
      median_since_ms: row.recent_ms,
    })),
    snoozes: snoozes.slice(0, 10).map((snooze) => ({
      id: snooze.id,
      until: snooze.snooze_until.toISOString(),
      active: snooze.snooze_until > now,
      source: snooze.source,
      environment_id: snooze.scoped_to_environment_id,
      reason: snooze.description,
    })),
    url: `${deps.config.publicUrl}/projects/${projectId}/tests/${test.id}`,
  };
}

export async function searchTests(deps: Deps, projectId: number, input: { query: string; owner?: string; per_page: number }) {
  const { rows, total } = await findTests(deps.sql, projectId, input.query, input.per_page, input.owner ?? null);
  return {
    tests: rows.map((test) => ({
      id: test.id,
      title: test.name,
      file: test.file_path,
      runner_project: test.runner_project,
      tags: test.tags,
      owners: test.owners,
    })),
    total,
  };
}

/** An environment's digest of the last day or week: what a team's weekly report would say. */
export async function readDigest(deps: Deps, projectId: number, input: { environment_id: number; period: DigestPeriod }) {
  const environment = await getEnvironment(deps.sql, projectId, input.environment_id);
  if (!environment) throw new NotFoundError(`environment_id: environment ${input.environment_id} not found`);
  return composeDigest(deps.sql, projectId, environment, input.period, deps.clock());
}

export async function readFlakyTests(
  deps: Deps,
  projectId: number,
  input: { environment_id?: number; class?: FlakinessClass; owner?: string; page: number; per_page: number },
) {
  const { rows, total } = await rankedFlakyTests(deps.sql, projectId, WINDOW_DAYS, {
    environmentId: input.environment_id,
    class: input.class,
    owner: input.owner ?? null,
    now: deps.clock(),
    limit: input.per_page,
    offset: (input.page - 1) * input.per_page,
  });
  return { window_days: WINDOW_DAYS, tests: rows.map(({ failed_runs: _failed, ...row }) => row), total, page: input.page };
}

export async function readFailureGroups(
  deps: Deps,
  projectId: number,
  input: { status?: 'open' | 'resolved' | 'ignored'; owner?: string; page: number; per_page: number },
) {
  const { rows, total } = await listGroups(deps.sql, projectId, {
    status: input.status,
    owner: input.owner,
    limit: input.per_page,
    offset: (input.page - 1) * input.per_page,
  });
  return {
    failure_groups: rows.map((group) => ({
      id: group.id,
      title: group.title,
      category: group.category,
      status: group.status,
      tests: group.member_count,
      seen: group.occurrence_count,
      last_seen_at: group.last_seen_at.toISOString(),
      last_run_id: group.last_test_run_id,
      diagnosis: group.diagnosis,
      issue: group.issue,
      owners: group.owners,
    })),
    total,
    page: input.page,
  };
}

export async function readFailureGroup(deps: Deps, projectId: number, input: { failure_group_id: string }) {
  const group = await getGroup(deps.sql, projectId, input.failure_group_id);
  if (!group) throw new NotFoundError(`failure_group_id: failure group ${input.failure_group_id} not found`);
  const members = foldMembers(await memberEvents(deps.sql, projectId, group.id));
  const titles = await testTitles(
    deps.sql,
    projectId,
    members.slice(0, 100).map((member) => member.test_case_id),
  );
  return {
    failure_group: {
      id: group.id,
      title: group.title,
      status: group.status,
      diagnosis: group.diagnosis,
      seen: group.occurrence_count,
      first_seen_at: group.first_seen_at.toISOString(),
      last_seen_at: group.last_seen_at.toISOString(),
      issue: group.issue,
      owners: group.owners,
    },
    tests: members.slice(0, 100).map((member) => ({
      test_case_id: member.test_case_id,
      title: titles.get(member.test_case_id) ?? member.test_case_id,
      state: member.state,
      sightings: member.sighting_count,
      last_run_id: member.last_test_run_id,
    })),
    tests_total: members.length,
    url: `${deps.config.publicUrl}/projects/${projectId}/failure-groups/${encodeURIComponent(group.id)}`,
  };
}

export async function readComparison(deps: Deps, projectId: number, input: { run_id: number; other_run_id: number }) {
  const comparison = await compareRuns(deps.sql, projectId, input.run_id, input.other_run_id, 50);
  const brief = (list: typeof comparison.new_failures) => ({
    total: list.total,
    tests: list.tests.map((test) => ({ ...test, error_message: cut(test.error_message, 500) })),
  });
  return {
    run: comparison.run,
    base: comparison.base,
    new_failures: brief(comparison.new_failures),
    fixed: brief(comparison.fixed),
    still_failing: brief(comparison.still_failing),
    added: brief(comparison.added),
    removed: brief(comparison.removed),
    flaky: brief(comparison.flaky),
    duration_changes: brief(comparison.duration_changes),
  };
}

/** A comparison with no earlier run to compare with. */
export class NoEarlierRun extends NotFoundError {
  constructor(runId: number) {
    super(`run_id: test run ${runId} has no earlier run of its environment and branch to compare with; give other_run_id`);
  }
}
