import type { NotifySettings } from '../config.ts';
import { type GitHubCall, githubClient, type StoredDestination } from '../notifications/index.ts';
import { ISSUE_LABEL, type IssueRead, type IssueTracker, permanentStatus } from './tracker.ts';

// GitHub Issues, through Octokit's request (the client the GitHub destination uses), with the
// destination's token or the server's GitHub App on a repository bound to the project.

interface Issue {
  number: number;
  html_url: string;
  state: string;
  closed_at?: string | null;
  body?: string | null;
}

export async function githubTracker(destination: StoredDestination, settings: NotifySettings): Promise<IssueTracker> {
  const [owner, repo] = (destination.repo as string).split('/') as [string, string];
  let client: GitHubCall | null = null;
  // The App's installation token is asked for at the first call, so that its failure is the call's.
  const call: GitHubCall = async (route, parameters) => {
    client ??= await githubClient(destination, owner, repo, settings);
    return client(route, { owner, repo, ...parameters });
  };
  const issueNumber = (key: string) => Number(key);
  return {
    async findByMarker(marker) {
      const { data } = await call<Issue[]>('GET /repos/{owner}/{repo}/issues', {
        labels: ISSUE_LABEL,
        state: 'all',
        sort: 'created',
        direction: 'desc',
        per_page: 100,
      });
      const found = data.find((issue) => issue.body?.includes(marker));
      return found ? { key: String(found.number), url: found.html_url } : null;
    },
    async create({ title, body }) {
      const { data } = await call<Issue>('POST /repos/{owner}/{repo}/issues', { title: title.slice(0, 256), body, labels: [ISSUE_LABEL] });
      return { key: String(data.number), url: data.html_url };
    },
    async read(key): Promise<IssueRead> {
      const { data } = await call<Issue>('GET /repos/{owner}/{repo}/issues/{issue_number}', { issue_number: issueNumber(key) });
      return { key, url: data.html_url, state: data.state === 'closed' ? 'closed' : 'open', closedAt: data.closed_at ?? null };
    },
    async setState(key, state) {
      await call('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
        issue_number: issueNumber(key),
        state,
        state_reason: state === 'closed' ? 'completed' : 'reopened',
      });
    },
    async hasComment(key, marker) {
      const { data } = await call<{ body?: string }[]>('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        issue_number: issueNumber(key),
        per_page: 100,
      });
      return data.some((comment) => comment.body?.includes(marker));
    },
    async comment(key, body) {
      await call('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { issue_number: issueNumber(key), body });
    },
    failure(error) {
      const status = (error as { status?: number }).status;
      const message = (error as Error).message.split('\n')[0] || 'failed';
      return { error: status ? `GitHub ${status}: ${message}` : `GitHub: ${message}`, permanent: permanentStatus(status) };
    },
  };
}
