import type { NotifySettings } from '../config.ts';
import type { Tx } from '../db.ts';
import type { RunStory } from './compose.ts';
import type { Progress, Told } from './github.ts';
import { failuresOnBranch, lockPullComment, savePullComment } from './store.ts';
import { commentBody, countsLine, marker, section } from './request-comment.ts';
import type { StoredDestination } from './store.ts';

// A run's ending on GitLab, through its maintained client (@gitbeaker/rest): a commit status on its
// commit, and one note on the open merge request of its branch, edited in place by later runs (a
// section per environment), saying which failures the branch brought into the merge request's
// target branch.

const ATTEMPT_TIMEOUT_MS = 10_000;
const STATUS_OF: Record<string, 'success' | 'failed' | 'canceled'> = { passed: 'success', failed: 'failed', error: 'failed', cancelled: 'canceled' };
const ON_GITLAB = { request: 'merge request', base: 'the target branch' } as const;

type Client = InstanceType<typeof import('@gitbeaker/rest').Gitlab<false>>;

/**
 * The destination's client, on the configured API (`https://HOST/api/v4`; the client adds its
 * `/api/v4`): with its token, or else the server's (which the delivery checked it may use there).
 */
async function clientFor(destination: StoredDestination, settings: NotifySettings): Promise<Client> {
  // Loaded when a GitLab destination is first told: the HTTP workers never need it.
  const { Gitlab } = await import('@gitbeaker/rest');
  const token = destination.token ?? settings.gitlabToken;
  if (token === null) throw new Error('no token, and the server has no GitLab token (PROCTOR_GITLAB_TOKEN)');
  return new Gitlab({ host: settings.gitlabApiUrl.replace(/\/api\/v4$/, ''), token, queryTimeout: ATTEMPT_TIMEOUT_MS });
}

/** A project's id as the API takes it: a number, or its path (the client encodes it). */
function projectOf(destination: StoredDestination): string | number {
  const project = destination.project as string;
  return /^\d+$/.test(project) ? Number(project) : project;
}

export async function tellGitLab(sql: Tx, destination: StoredDestination, story: RunStory, settings: NotifySettings, progress: Progress): Promise<Told> {
  try {
    const gitlab = await clientFor(destination, settings);
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
    if (!run.branch) return { ok: true };
    const [request] = await gitlab.MergeRequests.all({ projectId: project, sourceBranch: run.branch, state: 'opened', perPage: 1, maxPages: 1 });
    if (!request) return { ok: true };
    const target = request.target_branch;
    const onTarget = target === run.branch ? null : await failuresOnBranch(sql, run.environment_slug, run.project_id, target, run.id);
    const note = await lockPullComment(sql, destination.id, request.iid);
    note.sections[run.environment_slug] = section(story, target, onTarget, ON_GITLAB);
    const body = commentBody(destination.id, note.sections, ON_GITLAB);
    note.comment_id ??= await findOwnNote(gitlab, project, request.iid, destination.id);
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
    await savePullComment(sql, destination.id, request.iid, note);
    return { ok: true };
  } catch (error) {
    return refusalOf(error);
  }
}

/** The status GitLab answered a failed request with (the client keeps its response as the error's cause). */
function statusOf(error: unknown): number | undefined {
  return (error as { cause?: { response?: { status?: number } } }).cause?.response?.status;
}

function refusalOf(error: unknown): Told {
  const status = statusOf(error);
  const message = (error as Error).message.split('\n')[0] || 'failed';
  // A refusal (a token without access, a project that is not there) will not change by retrying.
  const permanent = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
  return { ok: false, error: status ? `GitLab ${status}: ${message}` : `GitLab: ${message}`, permanent };
}

async function findOwnNote(gitlab: Client, project: string | number, iid: number, destinationId: number): Promise<number | null> {
  const notes = await gitlab.MergeRequestNotes.all(project, iid, { perPage: 100, maxPages: 1 });
  return notes.find((note) => note.body?.startsWith(marker(destinationId)))?.id ?? null;
}
