import type { NotifySettings } from '../config.ts';
import type { Tx } from '../db.ts';
import { appJwt, installationToken } from './github-app.ts';
import type { RunStory } from './compose.ts';
import { commentBody, countsLine, marker, section } from './request-comment.ts';
import { slowerPart } from './request-slower.ts';
import { failuresOnBranch, lockPullComment, savePullComment } from './store.ts';
import { visualLineOf } from './visual-status-store.ts';
import type { StoredDestination } from './store.ts';

// A run's ending on GitHub: a commit status on its commit, and a comment on the open pull request
// of its branch, edited in place by later runs (one comment per pull request, a section per
// environment), saying which failures the branch brought.

const API_VERSION = '2022-11-28';
const ATTEMPT_TIMEOUT_MS = 10_000;
const STATUS_OF: Record<string, 'success' | 'failure' | 'error'> = { passed: 'success', failed: 'failure', error: 'error', cancelled: 'error' };

/** How GitHub names what the comment is on, and the branch its failures are held against. */
const ON_GITHUB = { request: 'pull request', base: 'the default branch' } as const;

export type Told = { ok: true } | { ok: false; error: string; permanent: boolean };

export type Call = <T>(route: string, parameters: Record<string, unknown>) => Promise<{ data: T }>;
type Request = typeof import('@octokit/request').request;

function caller(request: Request, authorization: string): Call {
  return <T>(route: string, parameters: Record<string, unknown>) =>
    request(route, {
      ...parameters,
      headers: { authorization, 'x-github-api-version': API_VERSION },
      request: { signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) },
    }) as Promise<{ data: T }>;
}

/**
 * The destination's client: its token, or else an installation of the server's GitHub App on the
 * repository (found with the App's own JWT, then a token of that installation for this repository
 * alone). The delivery has checked that the repository is bound to the destination's project.
 */
export async function githubClient(destination: StoredDestination, owner: string, repo: string, settings: NotifySettings): Promise<Call> {
  // Loaded when a GitHub destination is first told: the HTTP workers never need it.
  const { request: octokitRequest } = await import('@octokit/request');
  const request = octokitRequest.defaults({ baseUrl: settings.githubApiUrl, headers: { 'user-agent': 'Proctor-Notifications' } });
  if (destination.token) return caller(request, `token ${destination.token}`);
  const app = settings.githubApp;
  if (!app) throw Object.assign(new Error('no token, and the server has no GitHub App (PROCTOR_GITHUB_APP_ID)'), { status: 401 });
  const asApp = caller(request, `bearer ${appJwt(app)}`);
  const { data: installation } = await asApp<{ id: number }>('GET /repos/{owner}/{repo}/installation', { owner, repo });
  const token = await installationToken(app, installation.id, `${owner}/${repo}`, async () => {
    const { data } = await asApp<{ token: string; expires_at: string }>('POST /app/installations/{installation_id}/access_tokens', {
      installation_id: installation.id,
      repositories: [repo],
    });
    return data;
  });
  return caller(request, `token ${token}`);
}

/** The steps of the delivery that went through at earlier attempts, and how a step is marked done. */
export interface Progress {
  done: Set<string>;
  mark(step: string): Promise<void>;
}

export async function tellGitHub(sql: Tx, destination: StoredDestination, story: RunStory, settings: NotifySettings, progress: Progress): Promise<Told> {
  const [owner, repo] = (destination.repo as string).split('/') as [string, string];
  try {
    const call = await githubClient(destination, owner, repo, settings);
    const { run } = story;
    if (run.commit && !progress.done.has('status')) {
      await call('POST /repos/{owner}/{repo}/statuses/{sha}', {
        owner,
        repo,
        sha: run.commit,
        state: STATUS_OF[run.state] ?? 'error',
        target_url: run.summary_url,
        description: countsLine(story).slice(0, 140),
        context: `proctor/${run.environment_slug}`,
      });
      await progress.mark('status');
    }
    await commentOnPull(sql, call, owner, repo, destination.id, story, false);
    return { ok: true };
  } catch (error) {
    const status = (error as { status?: number }).status;
    const message = (error as Error).message.split('\n')[0] ?? 'failed';
    // A refusal (a token without access, a repository that is not there) will not change by retrying.
    const permanent = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
    return { ok: false, error: status ? `GitHub ${status}: ${message}` : `GitHub: ${message}`, permanent };
  }
}

/**
 * The run's section of the pull request's comment (the open pull request of its branch), written or
 * edited in place. `refresh`: only when the comment shows this run already (the visual review's
 * line changed since), never adding a section or putting back an older run's.
 */
async function commentOnPull(sql: Tx, call: Call, owner: string, repo: string, destinationId: number, story: RunStory, refresh: boolean): Promise<void> {
  const { run } = story;
  if (!run.branch) return;
  const { data: pulls } = await call<{ number: number; base?: { repo?: { default_branch?: string } | null } }[]>('GET /repos/{owner}/{repo}/pulls', {
    owner,
    repo,
    state: 'open',
    head: `${owner}:${run.branch}`,
    per_page: 1,
  });
  const pull = pulls[0];
  if (!pull) return;
  const defaultBranch = pull.base?.repo?.default_branch ?? (await repositoryDefaultBranch(call, owner, repo));
  const onDefault = defaultBranch === run.branch ? null : await failuresOnBranch(sql, run.environment_slug, run.project_id, defaultBranch, run.id);
  const comment = await lockPullComment(sql, destinationId, pull.number);
  // Read once the comment is held: a status of the visual review sent meanwhile finds this section to refresh.
  const written = section(story, defaultBranch, onDefault, ON_GITHUB, await visualLineOf(sql, run.id)) + (await slowerPart(sql, run.id, defaultBranch));
  const shown = comment.sections[run.environment_slug];
  // A refresh rewrites the run's own section only, and only when it says something new.
  if (refresh && (!shown?.includes(`[Run #${run.number}](`) || shown === written)) return;
  comment.sections[run.environment_slug] = written;
  const body = commentBody(destinationId, comment.sections, ON_GITHUB);
  comment.comment_id ??= await findOwnComment(call, owner, repo, pull.number, destinationId);
  if (comment.comment_id !== null) {
    const edited = await call('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { owner, repo, comment_id: comment.comment_id, body }).then(
      () => true,
      (error: { status?: number }) => {
        if (error.status === 404) return false;
        throw error;
      },
    );
    if (!edited) comment.comment_id = null;
  }
  if (comment.comment_id === null) {
    const { data } = await call<{ id: number }>('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      owner,
      repo,
      issue_number: pull.number,
      body,
    });
    comment.comment_id = data.id;
  }
  await savePullComment(sql, destinationId, pull.number, comment);
}

/** A commit status, as the visual review sends it. */
export interface CommitStatus {
  sha: string;
  branch: string | null;
  state: 'pending' | 'success' | 'failure';
  description: string;
  targetUrl: string;
}

/**
 * One commit status under `context` (the visual review's `proctor/visual`); with `story`, the run's
 * section of the pull request's comment is refreshed after (when the comment shows the run).
 */
export async function postGitHubStatus(
  destination: StoredDestination,
  settings: NotifySettings,
  context: string,
  status: CommitStatus,
  refresh?: { sql: Tx; story: RunStory },
): Promise<Told> {
  const [owner, repo] = (destination.repo as string).split('/') as [string, string];
  try {
    const call = await githubClient(destination, owner, repo, settings);
    await call('POST /repos/{owner}/{repo}/statuses/{sha}', {
      owner,
      repo,
      sha: status.sha,
      state: status.state,
      target_url: status.targetUrl,
      description: status.description.slice(0, 140),
      context,
    });
    if (refresh) await commentOnPull(refresh.sql, call, owner, repo, destination.id, refresh.story, true);
    return { ok: true };
  } catch (error) {
    const code = (error as { status?: number }).status;
    const message = (error as Error).message.split('\n')[0] ?? 'failed';
    const permanent = code !== undefined && code >= 400 && code < 500 && code !== 408 && code !== 429;
    return { ok: false, error: code ? `GitHub ${code}: ${message}` : `GitHub: ${message}`, permanent };
  }
}

/** A pull request answer may leave out its base repository: the repository itself says its default branch. */
async function repositoryDefaultBranch(call: Call, owner: string, repo: string): Promise<string> {
  const { data } = await call<{ default_branch: string }>('GET /repos/{owner}/{repo}', { owner, repo });
  return data.default_branch;
}

async function findOwnComment(call: Call, owner: string, repo: string, pullNumber: number, destinationId: number): Promise<number | null> {
  const { data } = await call<{ id: number; body?: string }[]>('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
    owner,
    repo,
    issue_number: pullNumber,
    per_page: 100,
  });
  return data.find((comment) => comment.body?.startsWith(marker(destinationId)))?.id ?? null;
}
