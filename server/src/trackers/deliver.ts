import type { NotifySettings } from '../config.ts';
import type { Clock } from '../context.ts';
import type { Sql, Tx } from '../db.ts';
import { refusedAtDelivery, retryDelayMs } from '../notifications/index.ts';
import type { ReceiverPolicy } from '../outbound/addresses.ts';
import { githubTracker } from './github.ts';
import { gitlabTracker } from './gitlab.ts';
import { type DueAction, markActionDone, markActionFailed, markActionStep } from './outbox-store.ts';
import { takeDueAction } from './outbox-store.ts';
import { recordIssue } from './store.ts';
import { type IssueTracker, markerComment } from './tracker.ts';

// The trackers' outbox, sent as notification deliveries are: the next action due, held (row lock)
// while it is sent, tried again after 2, 4, 8 … seconds until the destinations' retry window ends,
// given up on at once when the tracker refuses. Nothing is posted twice: a create looks first for
// the issue that carries its link's marker, a comment for the comment that carries its action's key,
// and the steps that went through are kept with the action.

export interface TrackerDeps {
  sql: Sql;
  clock: Clock;
  settings: NotifySettings;
  /** Where a Jira site or Linear's API may be, as webhook receivers may. */
  receivers: ReceiverPolicy;
}

/** The tracker the action's issue lives in, with the credentials that reach it; null when they are gone. */
async function trackerOf(due: DueAction, deps: TrackerDeps): Promise<IssueTracker | null> {
  const { destination, settings } = due;
  if (destination?.type === 'github') return githubTracker(destination, deps.settings);
  if (destination?.type === 'gitlab') return gitlabTracker(destination, deps.settings);
  // Jira's and Linear's clients are loaded when an action is sent to them, not by every HTTP worker
  // at start: jira.js (with axios) and @linear/sdk are a fifth of a worker's heap (issue 53).
  if (settings?.tracker === 'jira')
    return (await import('./jira.ts')).jiraTracker(
      {
        url: settings.jira_url as string,
        project: settings.jira_project as string,
        issueType: settings.jira_issue_type as string,
        email: settings.jira_email,
        token: settings.jira_token as string,
      },
      deps.receivers,
    );
  if (settings?.tracker === 'linear')
    return (await import('./linear.ts')).linearTracker(
      { apiUrl: deps.settings.linearApiUrl, apiKey: settings.linear_api_key as string, team: settings.linear_team as string },
      deps.receivers,
    );
  return null;
}

type Outcome = { ok: true } | { ok: false; error: string; permanent: boolean };

/** Sends the next tracker action due; false when none is. */
export function deliverTrackerActionNext(deps: TrackerDeps): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    const due = await takeDueAction(tx, deps.clock());
    if (!due) return false;
    const outcome = await attempt(tx, due, deps);
    if (outcome.ok) {
      await markActionDone(tx, due.id, deps.clock());
      return true;
    }
    const retryAt = new Date(deps.clock().getTime() + retryDelayMs(due.attempts + 1));
    const givenUp = outcome.permanent || retryAt.getTime() - due.created_at.getTime() > deps.settings.retryMs;
    await markActionFailed(tx, due.id, outcome.error, givenUp ? null : retryAt);
    return true;
  });
}

async function attempt(tx: Tx, due: DueAction, deps: TrackerDeps): Promise<Outcome> {
  const refused = due.destination ? await refusedAtDelivery(tx, due.destination, deps.settings) : null;
  if (refused) return { ok: false, error: refused, permanent: true };
  const tracker = await trackerOf(due, deps);
  if (!tracker) return { ok: false, error: `not sent: the project's tracker is no longer ${due.link.tracker} (PUT /api/tracker-settings)`, permanent: true };
  try {
    await act(tx, due, tracker, deps.clock);
    return { ok: true };
  } catch (error) {
    if (error instanceof NoIssue) return { ok: false, error: error.message, permanent: true };
    return { ok: false, ...tracker.failure(error) };
  }
}

class NoIssue extends Error {}

async function act(tx: Tx, due: DueAction, tracker: IssueTracker, clock: Clock): Promise<void> {
  const { link, payload } = due;
  const step = async (name: string, run: () => Promise<void>) => {
    if (due.steps_done.includes(name)) return;
    await run();
    await markActionStep(tx, due.id, name);
  };
  if (due.kind === 'create') {
    const marker = markerComment('link', link.marker);
    const issue = (await tracker.findByMarker(marker)) ?? (await tracker.create({ title: payload.title ?? '', body: payload.body ?? '' }));
    await recordIssue(tx, link.id, { key: issue.key, url: issue.url, state: 'open' }, clock());
    return;
  }
  if (link.issue_key === null) throw new NoIssue('not sent: the issue was never created (see its create action)');
  const key = link.issue_key;
  const issue = await tracker.read(key);
  await recordIssue(tx, link.id, { url: issue.url, state: issue.state }, clock());
  const comment = async () => {
    const marker = markerComment('action', due.key);
    if (!(await tracker.hasComment(key, marker))) await tracker.comment(key, `${payload.comment ?? ''}\n\n${marker}`);
  };
  if (due.kind === 'failing') {
    // Open, and not by a reopening of this action's whose answer was lost: nothing to say.
    if (issue.state === 'open' && !due.steps_done.includes('reopening')) return;
    if (payload.reopen) {
      await step('reopen', async () => {
        await markActionStep(tx, due.id, 'reopening');
        await tracker.setState(key, 'open');
        await recordIssue(tx, link.id, { state: 'open' }, clock());
      });
      await step('comment', comment);
      return;
    }
    // Commented on once per closing: the closing's time tells one from the next.
    const closedAt = issue.closedAt ? new Date(issue.closedAt) : null;
    if (closedAt !== null && link.noted_closed_at?.getTime() === closedAt.getTime()) return;
    await step('comment', comment);
    await recordIssue(tx, link.id, { notedClosedAt: closedAt }, clock());
    return;
  }
  if (due.kind === 'passing') {
    if (issue.state === 'closed' && !due.steps_done.includes('comment')) return;
    await step('comment', comment);
    if (payload.close)
      await step('close', async () => {
        await tracker.setState(key, 'closed');
        await recordIssue(tx, link.id, { state: 'closed' }, clock());
      });
  }
  // `refresh`: the read above is all it does.
}
