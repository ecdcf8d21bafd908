import type { NotifySettings } from '../config.ts';
import { type GitLabClient, gitlabClient, gitlabProjectOf, gitlabStatusOf, type StoredDestination } from '../notifications/index.ts';
import { sendingOnce } from './gitlab-once.ts';
import { ISSUE_LABEL, type IssueRead, type IssueTracker, permanentStatus } from './tracker.ts';

// GitLab issues, through its maintained client (@gitbeaker/rest, as the GitLab destination uses),
// with the destination's token or the server's on a project bound to Proctor's project; each
// request sent once (gitlab-once.ts), the outbox retrying.

export async function gitlabTracker(destination: StoredDestination, settings: NotifySettings): Promise<IssueTracker> {
  const project = gitlabProjectOf(destination);
  let client: GitLabClient | null = null;
  const gitlab = async () => (client ??= await gitlabClient(destination, settings, sendingOnce));
  const iid = (key: string) => Number(key);
  return {
    async findByMarker(marker) {
      const issues = await (
        await gitlab()
      ).Issues.all({ projectId: project, labels: ISSUE_LABEL, search: marker, in: 'description', perPage: 100, maxPages: 1 });
      const found = issues.find((issue) => String(issue.description ?? '').includes(marker));
      return found ? { key: String(found.iid), url: String(found.web_url) } : null;
    },
    async create({ title, body }) {
      const issue = await (await gitlab()).Issues.create(project, title.slice(0, 255), { description: body, labels: ISSUE_LABEL });
      return { key: String(issue.iid), url: String(issue.web_url) };
    },
    async read(key): Promise<IssueRead> {
      const issue = await (await gitlab()).Issues.show(iid(key), { projectId: project });
      return { key, url: String(issue.web_url), state: issue.state === 'closed' ? 'closed' : 'open', closedAt: (issue.closed_at as string | null) ?? null };
    },
    async setState(key, state) {
      await (await gitlab()).Issues.edit(project, iid(key), { stateEvent: state === 'closed' ? 'close' : 'reopen' });
    },
    async hasComment(key, marker) {
      const notes = await (await gitlab()).IssueNotes.all(project, iid(key), { perPage: 100, maxPages: 1 });
      return notes.some((note) => note.body?.includes(marker));
    },
    async comment(key, body) {
      await (await gitlab()).IssueNotes.create(project, iid(key), body);
    },
    failure(error) {
      const status = gitlabStatusOf(error);
      const message = (error as Error).message.split('\n')[0] || 'failed';
      return { error: status ? `GitLab ${status}: ${message}` : `GitLab: ${message}`, permanent: permanentStatus(status) };
    },
  };
}
