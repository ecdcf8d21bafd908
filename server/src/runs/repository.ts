// Links into a project's repository on its host, where the host is one whose URLs are known.

/** The project's repository as an https URL without `.git`, or null when it is not one (a path, an ssh remote, none). */
export function repositoryUrl(repoUrl: string | null): URL | null {
  if (repoUrl === null || !/^https:\/\//.test(repoUrl)) return null;
  try {
    return new URL(repoUrl.replace(/\.git$/, '').replace(/\/$/, ''));
  } catch {
    return null;
  }
}

/** The host's page comparing two commits, on GitHub and GitLab; null elsewhere. */
export function commitsCompareUrl(repoUrl: string | null, from: string, to: string): string | null {
  const url = repositoryUrl(repoUrl);
  if (!url || !/^[0-9a-f]{7,64}$/i.test(from) || !/^[0-9a-f]{7,64}$/i.test(to)) return null;
  const base = `${url.origin}${url.pathname}`;
  if (url.hostname.includes('gitlab')) return `${base}/-/compare/${from}...${to}`;
  if (url.hostname === 'github.com' || url.hostname.startsWith('github.')) return `${base}/compare/${from}...${to}`;
  return null;
}
