/** owner/name of a repository URL or path: its last two parts. */
export function repoNameOf(repo: string): string {
  const cleaned = repo.replace(/\.git$/, '').replace(/\/+$/, '');
  return cleaned.split(/[/:]/).filter(Boolean).slice(-2).join('/') || cleaned;
}
