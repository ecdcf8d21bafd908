import type { NotifySettings } from '../config.ts';
import type { Tx } from '../db.ts';
import { refusedAtDelivery } from './credentials.ts';
import { githubClient as gitHubClient } from './github.ts';
import { gitlabClient as gitLabClient, projectOf, statusOf } from './gitlab.ts';
import { forgeDestinationRows, type StoredDestination } from './store.ts';

// Approved screenshot baselines written as one commit on a branch, through a GitHub or GitLab
// destination of the project and its credentials (its token, else the server's GitHub App or
// GitLab token on a bound repository): GitHub's git data API (a blob per file, a tree on the
// branch's, a commit, the branch moved to it without force), GitLab's commits API (one request,
// an action per file). The default branch is refused unless the caller allows it.

export interface FilesToCommit {
  branch: string;
  message: string;
  files: { path: string; content: Buffer }[];
  /** Whether the repository's default branch may take the commit (the project's setting). */
  allowDefaultBranch: boolean;
}

export type Committed =
  | { kind: 'committed'; sha: string; url: string | null }
  /** Will not be written by trying again: the default branch, a branch that is not there, a refused credential. */
  | { kind: 'refused'; reason: string }
  | { kind: 'failed'; error: string };

/** The project's GitHub and GitLab destinations, GitHub's first, that may act on their repository. */
export async function forgeDestinations(sql: Tx, projectId: number, settings: NotifySettings): Promise<StoredDestination[]> {
  const rows = await forgeDestinationRows(sql, projectId);
  const usable: StoredDestination[] = [];
  for (const row of rows) if ((await refusedAtDelivery(sql, row, settings)) === null) usable.push(row);
  return usable;
}

const DEFAULT_REFUSED = (branch: string) =>
  `${branch} is the repository's default branch: the project does not allow baselines to be committed there (baselines_to_default_branch)`;

function failureOf(host: string, status: number | undefined, error: unknown): Committed {
  const message = (error as Error).message.split('\n')[0] || 'failed';
  const said = status ? `${host} ${status}: ${message}` : `${host}: ${message}`;
  // 409 and 422 are a branch that moved meanwhile (not a fast-forward): the next attempt starts from its new head.
  const permanent = status !== undefined && status >= 400 && status < 500 && ![408, 409, 422, 429].includes(status);
  return permanent ? { kind: 'refused', reason: said } : { kind: 'failed', error: said };
}

export async function commitToGitHub(destination: StoredDestination, settings: NotifySettings, commit: FilesToCommit): Promise<Committed> {
  const [owner, repo] = (destination.repo as string).split('/') as [string, string];
  try {
    const call = await gitHubClient(destination, owner, repo, settings);
    const { data: repository } = await call<{ default_branch: string }>('GET /repos/{owner}/{repo}', { owner, repo });
    if (repository.default_branch === commit.branch && !commit.allowDefaultBranch) return { kind: 'refused', reason: DEFAULT_REFUSED(commit.branch) };
    const { data: head } = await call<{ object: { sha: string } }>('GET /repos/{owner}/{repo}/git/ref/{ref}', { owner, repo, ref: `heads/${commit.branch}` });
    const { data: parent } = await call<{ tree: { sha: string } }>('GET /repos/{owner}/{repo}/git/commits/{commit_sha}', {
      owner,
      repo,
      commit_sha: head.object.sha,
    });
    const tree = [];
    for (const file of commit.files) {
      const { data: blob } = await call<{ sha: string }>('POST /repos/{owner}/{repo}/git/blobs', {
        owner,
        repo,
        content: file.content.toString('base64'),
        encoding: 'base64',
      });
      tree.push({ path: file.path, mode: '100644', type: 'blob', sha: blob.sha });
    }
    const { data: made } = await call<{ sha: string }>('POST /repos/{owner}/{repo}/git/trees', { owner, repo, base_tree: parent.tree.sha, tree });
    const { data: created } = await call<{ sha: string; html_url: string }>('POST /repos/{owner}/{repo}/git/commits', {
      owner,
      repo,
      message: commit.message,
      tree: made.sha,
      parents: [head.object.sha],
    });
    await call('PATCH /repos/{owner}/{repo}/git/refs/{ref}', { owner, repo, ref: `heads/${commit.branch}`, sha: created.sha, force: false });
    return { kind: 'committed', sha: created.sha, url: created.html_url ?? null };
  } catch (error) {
    return failureOf('GitHub', (error as { status?: number }).status, error);
  }
}

export async function commitToGitLab(destination: StoredDestination, settings: NotifySettings, commit: FilesToCommit): Promise<Committed> {
  try {
    const gitlab = await gitLabClient(destination, settings);
    const project = projectOf(destination);
    const shown = (await gitlab.Projects.show(project)) as { default_branch?: string; web_url?: string };
    if (shown.default_branch === commit.branch && !commit.allowDefaultBranch) return { kind: 'refused', reason: DEFAULT_REFUSED(commit.branch) };
    const actions = [];
    for (const file of commit.files) {
      // A file the branch has is updated, one it lacks created: GitLab refuses the other action.
      const exists = await gitlab.RepositoryFiles.show(project, file.path, commit.branch).then(
        () => true,
        (error: unknown) => {
          if (statusOf(error) === 404) return false;
          throw error;
        },
      );
      actions.push({
        action: exists ? ('update' as const) : ('create' as const),
        filePath: file.path,
        content: file.content.toString('base64'),
        encoding: 'base64',
      });
    }
    const created = (await gitlab.Commits.create(project, commit.branch, commit.message, actions)) as { id: string; web_url?: string };
    return { kind: 'committed', sha: created.id, url: created.web_url ?? null };
  } catch (error) {
    return failureOf('GitLab', statusOf(error), error);
  }
}
