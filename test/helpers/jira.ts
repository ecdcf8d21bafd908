import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { startJsonStandIn, type StandInRequest } from './stand-in.ts';

// Jira's REST API cannot be reached from here: a stand-in on loopback answers the few routes Proctor
// calls (REST API v2, as Cloud and Data Center serve it) and records every request; each recorded
// request is checked against Atlassian's published OpenAPI description (the operations Proctor
// calls, test/fixtures/jira/): the operation of the same path under /rest/api/3 exists for the
// method, the query's names and the path's are the operation's, the body is valid by its schema.

export type JiraRequest = StandInRequest;

export interface JiraIssue {
  id: string;
  key: string;
  summary: string;
  description: string;
  labels: string[];
  /** Its status' category: To Do (`new`), In Progress (`indeterminate`) or Done (`done`). */
  category: 'new' | 'indeterminate' | 'done';
  resolutiondate: string | null;
  comments: { id: string; body: string }[];
}

export interface JiraStandIn {
  /** The site's base URL: `http://127.0.0.1:PORT`. */
  url: string;
  requests: JiraRequest[];
  issues: JiraIssue[];
  /** A person moves the issue to Done on Jira. */
  closeIssue(key: string): void;
  /** A person files an issue in the project, not through Proctor. */
  fileIssue(summary: string, category: JiraIssue['category']): JiraIssue;
  /** The next `count` requests of `method` on a path matching `path` are carried out, then answered 502 (the answer lost). */
  loseAnswersNext(method: string, path: RegExp, count: number): void;
  close(): Promise<void>;
}

/** The workflow's transitions: from each category, where one can go. */
const TRANSITIONS: Record<JiraIssue['category'], { id: string; name: string; to: JiraIssue['category'] }[]> = {
  new: [
    { id: '21', name: 'Start progress', to: 'indeterminate' },
    { id: '31', name: 'Done', to: 'done' },
  ],
  indeterminate: [{ id: '31', name: 'Done', to: 'done' }],
  done: [{ id: '41', name: 'Reopen', to: 'new' }],
};
const STATUS_NAMES = { new: 'To Do', indeterminate: 'In Progress', done: 'Done' } as const;

export async function startJira(projectKey = 'OPS'): Promise<JiraStandIn> {
  const issues: JiraIssue[] = [];
  const losing: { method: string; path: RegExp; count: number }[] = [];
  let nextId = 10_000;
  const transitionsOf = (issue: JiraIssue) =>
    TRANSITIONS[issue.category].map((t) => ({ id: t.id, name: t.name, to: { name: STATUS_NAMES[t.to], statusCategory: { key: t.to } } }));
  const file = (summary: string, description: string, labels: string[], category: JiraIssue['category']) => {
    const issue: JiraIssue = {
      id: String(nextId++),
      key: `${projectKey}-${issues.length + 1}`,
      summary,
      description,
      labels,
      category,
      resolutiondate: null,
      comments: [],
    };
    if (category === 'done') issue.resolutiondate = new Date().toISOString();
    issues.push(issue);
    return issue;
  };
  const standIn = await startJsonStandIn((request) => {
    const answer = carryOut(request);
    const lost = losing.find((l) => l.count > 0 && l.method === request.method && l.path.test(request.path));
    if (lost && answer[0] < 300) {
      lost.count--;
      return [502, { errorMessages: ['Bad gateway'] }];
    }
    return answer;
  });
  const url = standIn.origin;
  const shown = (issue: JiraIssue) => ({ id: issue.id, key: issue.key, self: `${url}/rest/api/2/issue/${issue.id}` });

  function carryOut(request: JiraRequest): [number, unknown] {
    const { method, path } = request;
    const byKey = (key: string) => issues.find((i) => i.key === decodeURIComponent(key));
    if (method === 'GET' && (path === '/rest/api/2/search/jql' || path === '/rest/api/2/search')) {
      const jql = request.query.get('jql') ?? '';
      const label = /labels = "([^"]+)"/.exec(jql)?.[1];
      const project = /project = "([^"]+)"/.exec(jql)?.[1];
      const found = issues.filter((i) => (!project || i.key.startsWith(`${project}-`)) && (!label || i.labels.includes(label))).reverse();
      const listed = found.map((i) => ({ ...shown(i), fields: { summary: i.summary } }));
      return [200, path.endsWith('/jql') ? { issues: listed, isLast: true } : { startAt: 0, maxResults: 10, total: found.length, issues: listed }];
    }
    if (method === 'POST' && path === '/rest/api/2/issue') {
      const fields = (request.body as { fields: { summary: string; description: string; labels?: string[]; project: { key: string } } }).fields;
      if (fields.project.key !== projectKey) return [400, { errors: { project: 'valid project is required' } }];
      return [201, shown(file(fields.summary, fields.description, fields.labels ?? [], 'new'))];
    }
    let match = /^\/rest\/api\/2\/issue\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) {
      const issue = byKey(match[1] as string);
      if (!issue) return [404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'] }];
      const category = issue.category;
      return [
        200,
        { ...shown(issue), fields: { status: { name: STATUS_NAMES[category], statusCategory: { key: category } }, resolutiondate: issue.resolutiondate } },
      ];
    }
    match = /^\/rest\/api\/2\/issue\/([^/]+)\/transitions$/.exec(path);
    if (match) {
      const issue = byKey(match[1] as string);
      if (!issue) return [404, { errorMessages: ['Issue does not exist'] }];
      if (method === 'GET') return [200, { transitions: transitionsOf(issue) }];
      const id = (request.body as { transition?: { id?: string } }).transition?.id;
      const transition = TRANSITIONS[issue.category].find((t) => t.id === id);
      if (!transition) return [400, { errorMessages: [`Transition id '${id}' is not valid for this issue.`] }];
      issue.category = transition.to;
      issue.resolutiondate = transition.to === 'done' ? new Date().toISOString() : null;
      return [204, null];
    }
    match = /^\/rest\/api\/2\/issue\/([^/]+)\/comment$/.exec(path);
    if (match) {
      const issue = byKey(match[1] as string);
      if (!issue) return [404, { errorMessages: ['Issue does not exist'] }];
      if (method === 'GET') {
        const newest = request.query.get('orderBy') === '-created' ? [...issue.comments].reverse() : issue.comments;
        return [200, { startAt: 0, maxResults: 100, total: issue.comments.length, comments: newest }];
      }
      const comment = { id: String(nextId++), body: (request.body as { body: string }).body };
      issue.comments.push(comment);
      return [201, comment];
    }
    return [404, { errorMessages: [`no route ${method} ${path}`] }];
  }

  return {
    url,
    requests: standIn.requests,
    issues,
    closeIssue(key) {
      const issue = issues.find((i) => i.key === key) as JiraIssue;
      issue.category = 'done';
      issue.resolutiondate = new Date().toISOString();
    },
    fileIssue: (summary, category) => file(summary, `filed by a person`, [], category),
    loseAnswersNext(method, path, count) {
      losing.push({ method, path, count });
    },
    close: () => standIn.close(),
  };
}

type Parameter = { name: string; in: string; required?: boolean };
type Operation = { parameters?: Parameter[]; requestBody?: { required?: boolean; content: Record<string, { schema: object }> } };
type Description = { paths: Record<string, Record<string, Operation>>; components: object };

let description: Description | null = null;
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
addFormats.default(ajv);
const jiraDescription = () => (description ??= createRequire(import.meta.url)('../fixtures/jira/jira-platform-v3.operations.json') as Description);

/** What is wrong with a recorded request by Jira's published description; empty when nothing is. */
export function problemsWithJiraRequest(request: JiraRequest): string[] {
  if (!request.path.startsWith('/rest/api/2/')) return [`${request.method} ${request.path}: not under /rest/api/2`];
  const path = request.path.replace('/rest/api/2/', '/rest/api/3/');
  const found = Object.entries(jiraDescription().paths).find(
    ([template, operations]) => operations[request.method.toLowerCase()] && new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  );
  if (!found) return [`${request.method} ${request.path}: no such operation in Jira's REST API (of those Proctor calls)`];
  const [template, operations] = found;
  const operation = operations[request.method.toLowerCase()] as Operation;
  const problems: string[] = [];
  const queryNames = new Set((operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
  for (const name of request.query.keys()) if (!queryNames.has(name)) problems.push(`${template}: query parameter "${name}" is not the operation's`);
  for (const p of operation.parameters ?? [])
    if (p.in === 'query' && p.required && !request.query.has(p.name)) problems.push(`${template}: query parameter "${p.name}" is required`);
  const schema = operation.requestBody?.content['application/json']?.schema;
  if (schema && (request.body !== undefined || operation.requestBody?.required)) {
    const validate = ajv.compile({ ...schema, components: jiraDescription().components } as object);
    if (!validate(request.body)) problems.push(`${template}: ${ajv.errorsText(validate.errors)}`);
  } else if (!schema && request.body !== undefined) {
    problems.push(`${template}: the operation takes no body`);
  }
  return problems;
}
