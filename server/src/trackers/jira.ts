import type http from 'node:http';
import { HttpException, Version2Client } from 'jira.js';
import { type ReceiverPolicy, ReceiverRefusedError } from '../outbound/addresses.ts';
import { pinnedAgent, TRACKER_TIMEOUT_MS } from '../outbound/pinned.ts';
import { ISSUE_LABEL, type IssueRead, type IssueTracker, permanentStatus } from './tracker.ts';

// Jira issues, Cloud and Data Center alike through REST API v2 (the version both serve), with its
// maintained client (jira.js). Its requests go through axios on an agent pinned to the checked
// address of the site, redirects not followed, axios' own retries none. The link's marker is a
// label of the issue (set with the issue, so that a create whose answer was lost is found by JQL);
// a comment's action key is a line of its text (Jira's text shows what Markdown would hide).

export interface JiraAccount {
  url: string;
  project: string;
  issueType: string;
  /** Cloud: the account's email (Basic with an API token); null: a Data Center personal access token (Bearer). */
  email: string | null;
  token: string;
}

interface JiraFields {
  status?: { statusCategory?: { key?: string } };
  resolutiondate?: string | null;
}

const MARKER = /<!-- proctor:(link|action):([0-9a-f-]{36}) -->/g;
const markerLabel = (marker: string) => `proctor-${[...marker.matchAll(MARKER)][0]?.[2] ?? ''}`;

/** Proctor's Markdown as Jira's wiki markup, as far as the texts use it: headings, bold, code, links, tables. */
export function jiraText(markdown: string): string {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const fenced = /^(`{3,})$/.exec(line);
    if (fenced && (fence === null || fenced[1] === fence)) {
      lines.push('{noformat}');
      fence = fence === null ? (fenced[1] as string) : null;
      continue;
    }
    if (fence !== null) {
      lines.push(line);
      continue;
    }
    if (/^\|(-+\|)+$/.test(line)) continue;
    let text = line
      .replace(MARKER, (_, kind: string, id: string) => `proctor:${kind}:${id}`)
      .replace(/^### (.*)$/, 'h3. $1')
      .replace(/\*\*([^*]+)\*\*/g, '*$1*')
      .replace(/`([^`]+)`/g, '{{$1}}')
      .replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, '[$1|$2]');
    if (lines.length > 0 && /^\| Run \|/.test(text)) text = text.replace(/ \| /g, ' || ').replace(/^\| /, '|| ').replace(/ \|$/, ' ||');
    lines.push(text);
  }
  return lines.join('\n');
}

export function jiraTracker(account: JiraAccount, receivers: ReceiverPolicy): IssueTracker {
  let client: Version2Client | null = null;
  let agent: http.Agent | null = null;
  const jira = async () => {
    if (client) return client;
    agent = await pinnedAgent(new URL(account.url), receivers);
    client = new Version2Client({
      host: account.url,
      authentication: account.email ? { basic: { email: account.email, apiToken: account.token } } : { oauth2: { accessToken: account.token } },
      baseRequestConfig: { httpAgent: agent, httpsAgent: agent, maxRedirects: 0, timeout: TRACKER_TIMEOUT_MS, proxy: false },
    });
    return client;
  };
  const search = async (jql: string) => {
    const fields = ['summary'];
    // Cloud retired GET /search for /search/jql; Data Center has only the former.
    const found = account.email
      ? await (await jira()).issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql, fields, maxResults: 10 })
      : await (await jira()).issueSearch.searchForIssuesUsingJql({ jql, fields, maxResults: 10 });
    return found.issues ?? [];
  };
  const browse = (key: string) => `${account.url}/browse/${key}`;
  return {
    async findByMarker(marker) {
      const [issue] = await search(`project = "${account.project}" AND labels = "${markerLabel(marker)}" ORDER BY created DESC`);
      return issue?.key ? { key: issue.key, url: browse(issue.key) } : null;
    },
    async create({ title, body }) {
      const made = await (
        await jira()
      ).issues.createIssue({
        fields: {
          project: { key: account.project },
          issuetype: { name: account.issueType },
          summary: title.replace(/\s+/g, ' ').slice(0, 255),
          description: jiraText(body),
          labels: [ISSUE_LABEL, markerLabel(body)],
        },
      });
      return { key: made.key, url: browse(made.key) };
    },
    async read(key): Promise<IssueRead> {
      const issue = await (await jira()).issues.getIssue({ issueIdOrKey: key, fields: ['status', 'resolutiondate'] });
      const fields = issue.fields as unknown as JiraFields;
      const done = fields.status?.statusCategory?.key === 'done';
      return { key, url: browse(key), state: done ? 'closed' : 'open', closedAt: done ? (fields.resolutiondate ?? null) : null };
    },
    async setState(key, state) {
      // A workflow names its own transitions: the first one available whose target status is in the category wanted.
      const category = state === 'closed' ? 'done' : 'new';
      const { transitions = [] } = await (await jira()).issues.getTransitions({ issueIdOrKey: key });
      const transition = transitions.find((t) => t.to?.statusCategory?.key === category);
      // A transition whose answer was lost went through: the issue is where it was to go, nothing to send.
      if (!transition?.id && (await this.read(key)).state === state) return;
      if (!transition?.id)
        throw new NoTransition(`Jira: no transition of ${key} leads to a status of the category "${category === 'done' ? 'Done' : 'To Do'}"`);
      await (await jira()).issues.doTransition({ issueIdOrKey: key, transition: { id: transition.id } });
    },
    async hasComment(key, marker) {
      const line = jiraText(marker);
      const { comments = [] } = await (await jira()).issueComments.getComments({ issueIdOrKey: key, maxResults: 100, orderBy: '-created' });
      return comments.some((comment) => String((comment as { body?: unknown }).body ?? '').includes(line));
    },
    async comment(key, body) {
      await (await jira()).issueComments.addComment({ issueIdOrKey: key, comment: jiraText(body) });
    },
    failure(error) {
      if (error instanceof ReceiverRefusedError) return { error: `Jira: ${error.message}`, permanent: error.permanent };
      if (error instanceof NoTransition) return { error: error.message, permanent: true };
      const status = error instanceof HttpException ? error.status : undefined;
      const message = (error as Error).message.split('\n')[0] || 'failed';
      return { error: status ? `Jira ${status}: ${message}` : `Jira: ${message}`, permanent: permanentStatus(status) };
    },
  };
}

class NoTransition extends Error {}
