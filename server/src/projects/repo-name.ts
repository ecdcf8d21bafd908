import { ConflictError } from '../errors.ts';

/** owner/name of a repository URL or path: its last two parts. */
export function repoNameOf(repo: string): string {
  const cleaned = repo.replace(/\.git$/, '').replace(/\/+$/, '');
  return cleaned.split(/[/:]/).filter(Boolean).slice(-2).join('/') || cleaned;
}

/** The repository's owner/name as given, else from its URL; empty for a project without one. */
export function repoNameFor(repoUrl: string | null, given?: string): string {
  return given ?? (repoUrl === null ? '' : repoNameOf(repoUrl));
}

/**
 * The repository a triggered run or a sync checks out: a project that only receives reports has
 * none until an admin sets one.
 */
export function requireRepository(repoUrl: string | null): string {
  if (repoUrl === null)
    throw new ConflictError(
      'the project has no test repository, so Proctor has nothing to run: set one first (PATCH /api/project with repo_url, or Settings → Test repository); reports and JUnit uploads need none',
    );
  return repoUrl;
}
