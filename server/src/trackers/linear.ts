import type http from 'node:http';
import { LinearError, LinearErrorType, LinearSdk, parseLinearError } from '@linear/sdk';
import { type ReceiverPolicy, ReceiverRefusedError } from '../outbound/addresses.ts';
import { pinnedAgent, requestPinned } from '../outbound/pinned.ts';
import { type IssueRead, type IssueTracker, permanentStatus } from './tracker.ts';

// Linear issues through its maintained client (@linear/sdk): its operations and models, over
// Proctor's own HTTP call. LinearClient's transport is the global fetch, which takes no pinned
// address; LinearSdk takes any request function, so its GraphQL documents are sent here, through
// an agent pinned to the checked address of the API (the receivers' outbound rules), once each.
// Markers are lines of plain text: Linear's Markdown keeps no HTML comment to search for.

export interface LinearAccount {
  apiUrl: string;
  apiKey: string;
  team: string;
}

const MARKER = /<!-- proctor:(link|action):([0-9a-f-]{36}) -->/g;
/** Proctor's Markdown as Linear keeps it: the markers as plain lines. */
export const linearText = (markdown: string) => markdown.replace(MARKER, (_, kind: string, id: string) => `proctor:${kind}:${id}`);

/** What Linear answers that retrying will not change. */
const REFUSALS = new Set<string>([
  LinearErrorType.AuthenticationError,
  LinearErrorType.Forbidden,
  LinearErrorType.InvalidInput,
  LinearErrorType.FeatureNotAccessible,
  LinearErrorType.UserError,
  LinearErrorType.GraphqlError,
]);

export function linearTracker(account: LinearAccount, receivers: ReceiverPolicy): IssueTracker {
  const url = new URL(account.apiUrl);
  let agent: http.Agent | null = null;
  const request = async <Data, Variables extends Record<string, unknown>>(query: string, variables?: Variables): Promise<Data> => {
    agent ??= await pinnedAgent(url, receivers);
    const answer = await requestPinned(url, agent, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: account.apiKey, 'user-agent': 'Proctor-Trackers' },
      body: JSON.stringify({ query, variables }),
    });
    let parsed: { data?: Data; errors?: { message?: string; extensions?: { type?: string } }[] } = {};
    if (answer.contentType.includes('json')) parsed = JSON.parse(answer.text) as typeof parsed;
    if (answer.status === 200 && parsed.data && !parsed.errors?.length) return parsed.data;
    throw parseLinearError({
      message: answer.status >= 300 && answer.status < 400 ? `HTTP ${answer.status} (redirects are not followed)` : `HTTP ${answer.status}`,
      request: { query, variables },
      response: { status: answer.status, data: parsed.data, errors: parsed.errors as never },
    });
  };
  const sdk = new LinearSdk(request as ConstructorParameters<typeof LinearSdk>[0]);
  const stateOf = async (type: 'completed' | 'unstarted') => {
    const states = await sdk.workflowStates({ filter: { team: { id: { eq: account.team } }, type: { eq: type } }, first: 1 });
    const state = states.nodes[0];
    if (!state) throw new NoState(`Linear: the team has no workflow state of the type "${type}"`);
    return state.id;
  };
  return {
    async findByMarker(marker) {
      const issues = await sdk.issues({ filter: { team: { id: { eq: account.team } }, description: { contains: linearText(marker) } }, first: 10 });
      const found = issues.nodes[0];
      return found ? { key: found.identifier, url: found.url } : null;
    },
    async create({ title, body }) {
      const made = await sdk.createIssue({ teamId: account.team, title: title.slice(0, 255), description: linearText(body) });
      const issue = await made.issue;
      if (!issue) throw new Error('Linear made no issue');
      return { key: issue.identifier, url: issue.url };
    },
    async read(key): Promise<IssueRead> {
      const issue = await sdk.issue(key);
      const state = await issue.state;
      const closed = state?.type === 'completed' || state?.type === 'canceled';
      const closedAt = closed ? (issue.completedAt ?? issue.canceledAt ?? null) : null;
      return { key, url: issue.url, state: closed ? 'closed' : 'open', closedAt: closedAt ? new Date(closedAt).toISOString() : null };
    },
    async setState(key, state) {
      await sdk.updateIssue(key, { stateId: await stateOf(state === 'closed' ? 'completed' : 'unstarted') });
    },
    async hasComment(key, marker) {
      const comments = await sdk.comments({ filter: { issue: { id: { eq: (await sdk.issue(key)).id } }, body: { contains: linearText(marker) } }, first: 1 });
      return comments.nodes.length > 0;
    },
    async comment(key, body) {
      await sdk.createComment({ issueId: (await sdk.issue(key)).id, body: linearText(body) });
    },
    failure(error) {
      if (error instanceof ReceiverRefusedError) return { error: `Linear: ${error.message}`, permanent: error.permanent };
      if (error instanceof NoState) return { error: error.message, permanent: true };
      if (error instanceof LinearError) {
        const refused = error.status === 200 ? REFUSALS.has(error.type ?? '') : permanentStatus(error.status);
        return { error: `Linear${error.status ? ` ${error.status}` : ''}: ${error.type ?? 'error'}`, permanent: refused };
      }
      return { error: `Linear: ${(error as Error).message.split('\n')[0] || 'failed'}`, permanent: false };
    },
  };
}

class NoState extends Error {}
