import type { Tx } from '../db.ts';
import { composeStory } from './compose.ts';
import { refusedAtDelivery } from './credentials.ts';
import { retryDelayMs, type NotifyDeps } from './deliver.ts';
import { postGitHubStatus } from './github.ts';
import { postGitLabStatus } from './gitlab.ts';
import { markVisualStatusFailed, markVisualStatusSent, newestRunOnBranch, takeDueVisualStatus } from './visual-status-store.ts';

// The `proctor/visual` commit status of a run's visual changes, through the same GitHub and
// GitLab destinations (and credentials) as a run's ending: queued by the visual review, sent here,
// and with it the run's section of the pull/merge request comment refreshed (its visual line).

export const VISUAL_CONTEXT = 'proctor/visual';

/** Sends the next `proctor/visual` status due; false when none is. */
export function deliverVisualStatusNext(deps: NotifyDeps): Promise<boolean> {
  return deps.sql.begin(async (tx: Tx) => {
    const now = deps.clock();
    const due = await takeDueVisualStatus(tx, now);
    if (!due) return false;
    const refused = await refusedAtDelivery(tx, due.destination, deps.settings);
    const status = { sha: due.commit, branch: due.branch, state: due.state, description: due.description, targetUrl: deps.runUrl(due.test_run_id) };
    // The request's comment says the same as the status: its line on visual changes is refreshed with it.
    // The section shown is the newest run's of the environment and branch: its story, whose line may be this run's.
    const shown = refused ? null : await newestRunOnBranch(tx, due.test_run_id);
    const refresh = shown === null ? undefined : { sql: tx, story: await composeStory(tx, shown, deps.runUrl, deps.pageUrl) };
    const told = refused
      ? { ok: false as const, error: refused, permanent: true }
      : due.destination.type === 'github'
        ? await postGitHubStatus(due.destination, deps.settings, VISUAL_CONTEXT, status, refresh)
        : await postGitLabStatus(due.destination, deps.settings, VISUAL_CONTEXT, status, refresh);
    if (told.ok) {
      await markVisualStatusSent(tx, due.id, deps.clock());
      return true;
    }
    const retryAt = new Date(deps.clock().getTime() + retryDelayMs(due.attempts + 1));
    const givenUp = told.permanent || retryAt.getTime() - due.queued_at.getTime() > deps.settings.retryMs;
    await markVisualStatusFailed(tx, due.id, told.error, givenUp ? null : retryAt);
    return true;
  });
}
