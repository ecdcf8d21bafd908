import type { NotifySettings } from '../config.ts';
import type { Tx } from '../db.ts';
import type { RunStory } from './compose.ts';
import type { CommitStatus, Progress, Told } from './github.ts';
import { failuresOnBranch, lockPullComment, savePullComment } from './store.ts';
import { visualLineOf } from './visual-status-store.ts';
import { commentBody, countsLine, marker, section } from './request-comment.ts';
import { slowerPart } from './request-slower.ts';
import type { StoredDestination } from './store.ts';

// A run's ending on GitLab, through its maintained client (@gitbeaker/rest): a commit status on its
// commit, and one note on the open merge request of its branch, edited in place by later runs (a
// section per environment), saying which failures the branch brought into the merge request's
// target branch.

const ATTEMPT_TIMEOUT_MS = 10_000;
const STATUS_OF: Record<string, 'success' | 'failed' | 'canceled'> = { passed: 'success', failed: 'failed', error: 'failed', cancelled: 'canceled' };
const ON_GITLAB = { request: 'merge request', base: 'the target branch' } as const;

export type GitLabClient = InstanceType<typeof import('@gitbeaker/rest').Gitlab<false>>;

/**
 * The destination's client, on the configured API (`https://HOST/api/v4`; the client adds its
 * `/api/v4`): with its token, or else the server's (which the delivery checked it may use there).
 */
export async function gitlabClient(
  destination: StoredDestination,
  settings: NotifySettings,
  requesterFn?: ConstructorParameters<typeof import('@gitbeaker/rest').Gitlab>[0]['requesterFn'],
): Promise<GitLabClient> {
  // Loaded when a GitLab destination is first told: the HTTP workers never need it.
  const { Gitlab } = await import('@gitbeaker/rest');
  const token = destination.token ?? settings.gitlabToken;
  if (token === null) throw new Error('no token, and the server has no GitLab token (PROCTOR_GITLAB_TOKEN)');
  const host = settings.gitlabApiUrl.replace(/\/api\/v4$/, '');
  return new Gitlab({ host, token, queryTimeout: ATTEMPT_TIMEOUT_MS, ...(requesterFn ? { requesterFn } : {}) });
}

/** A project's id as the API takes it: a number, or its path (the client encodes it). */
export function projectOf(destination: StoredDestination): string | number {
  const project = destination.project as string;
  return /^\d+$/.test(project) ? Number(project) : project;
}

export async function tellGitLab(sql: Tx, destination: StoredDestination, story: RunStory, settings: NotifySettings, progress: Progress): Promise<Told> {
  try {
    const gitlab = await gitlabClient(destination, settings);
    const project = projectOf(destination);
    const { run } = story;
    if (run.commit && !progress.done.has('status')) {
      await gitlab.Commits.editStatus(project, run.commit, STATUS_OF[run.state] ?? 'failed', {
        name: `proctor/${run.environment_slug}`,
        targetUrl: run.summary_url,
        description: countsLine(story).slice(0, 255),
        ...(run.branch ? { ref: run.branch } : {}),
      });
      await progress.mark('status');
    }
    await noteOnMergeRequest(sql, gitlab, project, destination.id, story, false);
    return { ok: true };
  } catch (error) {
    return refusalOf(error);
  }
}

/**
 * The run's section of the merge request's note (the open merge request of its branch), written or
 * edited in place. `refresh`: only when the note shows this run already (the visual review's line
 * changed since), never adding a section or putting back an older run's.
 */
async function noteOnMergeRequest(
  sql: Tx,
  gitlab: GitLabClient,
  project: string | number,
  destinationId: number,
  story: RunStory,
  refresh: boolean,
): Promise<void> {
  const { run } = story;
  if (!run.branch) return;
  const [request] = await gitlab.MergeRequests.all({ projectId: project, sourceBranch: run.branch, state: 'opened', perPage: 1, maxPages: 1 });
  if (!request) return;
  const target = request.target_branch;
  const onTarget = target === run.branch ? null : await failuresOnBranch(sql, run.environment_slug, run.project_id, target, run.id);
  const note = await lockPullComment(sql, destinationId, request.iid);
  // Read once the note is held: a status of the visual review sent meanwhile finds this section to refresh.
  const written = section(story, target, onTarget, ON_GITLAB, await visualLineOf(sql, run.id)) + (await slowerPart(sql, run.id, target));
  const shown = note.sections[run.environment_slug];
  // A refresh rewrites the run's own section only, and only when it says something new.
  if (refresh && (!shown?.includes(`[Run #${run.number}](`) || shown === written)) return;
  note.sections[run.environment_slug] = written;
  const body = commentBody(destinationId, note.sections, ON_GITLAB);
  note.comment_id ??= await findOwnNote(gitlab, project, request.iid, destinationId);
  if (note.comment_id !== null) {
    const edited = await gitlab.MergeRequestNotes.edit(project, request.iid, note.comment_id, { body }).then(
      () => true,
      (error: unknown) => {
        if (statusOf(error) === 404) return false;
        throw error;
      },
    );
    if (!edited) note.comment_id = null;
  }
  if (note.comment_id === null) note.comment_id = (await gitlab.MergeRequestNotes.create(project, request.iid, body)).id;
  await savePullComment(sql, destinationId, request.iid, note);
}

/** The status GitLab answered a failed request with (the client keeps its response as the error's cause). */
export function statusOf(error: unknown): number | undefined {
  return (error as { cause?: { response?: { status?: number } } }).cause?.response?.status;
}

/**
 * One commit status under `context` (the visual review's `proctor/visual`); with `refresh`, the
 * run's section of the merge request's note is refreshed after (when the note shows the run).
 */
export async function postGitLabStatus(
  destination: StoredDestination,
  settings: NotifySettings,
  context: string,
  status: CommitStatus,
  refresh?: { sql: Tx; story: RunStory },
): Promise<Told> {
  try {
    const gitlab = await gitlabClient(destination, settings);
    await gitlab.Commits.editStatus(projectOf(destination), status.sha, status.state === 'failure' ? 'failed' : status.state, {
      name: context,
      targetUrl: status.targetUrl,
      description: status.description.slice(0, 255),
      ...(status.branch ? { ref: status.branch } : {}),
    });
    if (refresh) await noteOnMergeRequest(refresh.sql, gitlab, projectOf(destination), destination.id, refresh.story, true);
    return { ok: true };
  } catch (error) {
    return refusalOf(error);
  }
}

function refusalOf(error: unknown): Told {
  const status = statusOf(error);
  const message = (error as Error).message.split('\n')[0] || 'failed';
  // A refusal (a token without access, a project that is not there) will not change by retrying.
  const permanent = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
  return { ok: false, error: status ? `GitLab ${status}: ${message}` : `GitLab: ${message}`, permanent };
}

async function findOwnNote(gitlab: GitLabClient, project: string | number, iid: number, destinationId: number): Promise<number | null> {
  const notes = await gitlab.MergeRequestNotes.all(project, iid, { perPage: 100, maxPages: 1 });
  return notes.find((note) => note.body?.startsWith(marker(destinationId)))?.id ?? null;
}
