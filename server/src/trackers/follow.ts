import type { Sql, Tx } from '../db.ts';
import { failingComment, issueText, type Pages, passingComment } from './compose.ts';
import { followedRun, type FollowedRun, groupStory, groupsNewOnBranch, outcomesOfRun, testStory, testsTurnedBroken, testsTurnedFlaky } from './follow-store.ts';
import { queueAction, takeFollow } from './outbox-store.ts';
import type { SubjectKind } from './schema.ts';
import { getSettings, insertLink, type LinkRow, lockLinks, type SettingsRow, setPasses, trackerOfSettings } from './store.ts';

// How a run moves the project's tracker issues, once it is rolled up (its flakiness counted): the
// rules that create issues (a failure group new on the default branch, a test turned flaky or broken), and
// the links that follow their test: a failure queues a check that reopens (or comments on) a
// closed issue, and the N-th pass in a row a comment that may close it. Only runs of the settings'
// default branch move them: a feature branch's failures are its pull request's.

/** Follows the next rolled-up run waiting; false when none waits. */
export function followNextRun(sql: Sql, pages: (projectId: number) => Pages, now: () => Date): Promise<boolean> {
  return sql.begin(async (tx) => {
    const queued = await takeFollow(tx);
    if (!queued) return false;
    await followRun(tx, queued.test_run_id, pages(queued.project_id), now());
    return true;
  });
}

export async function followRun(sql: Tx, runId: number, pages: Pages, now: Date): Promise<void> {
  const run = await followedRun(sql, runId);
  if (!run || (run.state !== 'passed' && run.state !== 'failed')) return;
  const settings = await getSettings(sql, run.project_id);
  if (!settings || run.branch !== settings.default_branch) return;
  // The links are locked first: two runs of the project moving them take turns.
  const links = await lockLinks(sql, run.project_id);
  await applyRules(sql, run, settings, pages, now);
  const groups = links.filter((l) => l.subject_kind === 'failure_group').map((l) => l.subject_id);
  const outcomes = await outcomesOfRun(sql, run, groups);
  for (const link of links) {
    const fared = link.subject_kind === 'failure_group' ? groupOutcome(link, outcomes) : testOutcome(outcomes.tests.get(link.subject_id));
    if (fared === 'failed') await onFailure(sql, link, run, settings, pages, now);
    if (fared === 'passed') await onPass(sql, link, run, settings, pages, now);
  }
}

function groupOutcome(link: LinkRow, outcomes: Awaited<ReturnType<typeof outcomesOfRun>>): 'failed' | 'passed' | null {
  if (outcomes.failedGroups.has(link.subject_id)) return 'failed';
  return outcomes.passedGroups.has(link.subject_id) ? 'passed' : null;
}

/** A linked test fails while it fails or is flaky: its issue is about it not passing. */
function testOutcome(outcome: string | undefined): 'failed' | 'passed' | null {
  if (outcome === undefined) return null;
  return outcome === 'passed' ? 'passed' : 'failed';
}

async function onFailure(sql: Tx, link: LinkRow, run: FollowedRun, settings: SettingsRow, pages: Pages, now: Date): Promise<void> {
  await setPasses(sql, link.id, 0, now);
  // The issue is read when the check is sent: only then is it known whether someone closed it.
  const reopen = settings.when_closed_failing === 'reopen';
  const comment = failingComment(link.subject_kind, link.subject_id, run, pages, reopen);
  await queueAction(sql, link, 'failing', { comment, reopen }, run.id, now);
}

async function onPass(sql: Tx, link: LinkRow, run: FollowedRun, settings: SettingsRow, pages: Pages, now: Date): Promise<void> {
  const passes = link.passes + 1;
  await setPasses(sql, link.id, passes, now);
  // Once, on the N-th pass in a row: a later failure starts the count again.
  if (passes !== settings.passes_to_resolve) return;
  const comment = passingComment(link.subject_kind, link.subject_id, passes, run, pages);
  await queueAction(sql, link, 'passing', { comment, close: settings.close_when_resolved }, run.id, now);
}

async function applyRules(sql: Tx, run: FollowedRun, settings: SettingsRow, pages: Pages, now: Date): Promise<void> {
  const subjects: [SubjectKind, string][] = [
    ...(settings.create_for_new_groups ? (await groupsNewOnBranch(sql, run)).map((id): [SubjectKind, string] => ['failure_group', id]) : []),
    ...(settings.create_for_flaky_tests ? (await testsTurnedFlaky(sql, run)).map((id): [SubjectKind, string] => ['test', id]) : []),
    ...(settings.create_for_broken_tests
      ? (await testsTurnedBroken(sql, run, settings.broken_after_failures)).map((id): [SubjectKind, string] => ['test', id])
      : []),
  ];
  for (const [kind, id] of subjects) await createIssueFor(sql, run.project_id, settings, kind, id, 'rule', null, pages, now);
}

/**
 * A link of the subject to a new issue, and the action that creates it (its text composed now);
 * null when the subject has a link already, or is not the project's.
 */
export async function createIssueFor(
  sql: Tx,
  projectId: number,
  settings: SettingsRow,
  kind: SubjectKind,
  subjectId: string,
  origin: 'created' | 'rule',
  createdBy: string | null,
  pages: Pages,
  now: Date,
): Promise<LinkRow | null> {
  const story = kind === 'failure_group' ? await groupStory(sql, projectId, subjectId) : await testStory(sql, projectId, subjectId);
  const tracker = trackerOfSettings(settings);
  if (!story || !tracker) return null;
  const link = await insertLink(
    sql,
    projectId,
    {
      subjectKind: kind,
      subjectId,
      destinationId: settings.tracker === 'destination' ? settings.destination_id : null,
      tracker,
      origin,
      issue: null,
      createdBy,
    },
    now,
  );
  if (!link) return null;
  await queueAction(sql, link, 'create', issueText(kind, subjectId, story, link.marker, pages), null, now);
  return link;
}
