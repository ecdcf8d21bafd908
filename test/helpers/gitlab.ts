import { startJsonStandIn, type StandInRequest } from './stand-in.ts';

// GitLab's REST API cannot be reached from here: a stand-in on loopback answers the few routes
// Proctor calls (under /api/v4) and records every request, and each recorded request is checked
// against the shapes GitLab's API documentation gives for its operation (docs.gitlab.com/api):
// the method and path, the project's id (a number or a URL-encoded path), the query's parameter
// names, and the JSON body's names, types, allowed values and required ones.

export type GitLabRequest = StandInRequest;

interface Note {
  id: number;
  iid: number;
  body: string;
}

export interface GitLabStandIn {
  /** Where PROCTOR_GITLAB_API_URL points: `http://127.0.0.1:PORT/api/v4`. */
  url: string;
  requests: GitLabRequest[];
  statuses: { project: string; sha: string; state: string; name: string; description: string; target_url: string; ref?: string }[];
  notes: Note[];
  /** An open merge request from `branch` into `target`. */
  openMergeRequest(branch: string, iid: number, target?: string): void;
  close(): Promise<void>;
}

type Field = { type: 'string' | 'integer' | 'boolean'; values?: string[]; required?: boolean };

interface Operation {
  name: string;
  /** https://docs.gitlab.com/api/… where the operation is documented. */
  doc: string;
  method: string;
  path: RegExp;
  query?: string[];
  body?: Record<string, Field>;
}

const PROJECT = '([1-9]\\d*|[^/]+%2F[^/]+)';
const PAGINATION = ['page', 'per_page'];

/** The operations Proctor calls, as GitLab documents them. */
const DOCUMENTED: Operation[] = [
  {
    name: 'Set the pipeline status of a commit',
    doc: 'https://docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit',
    method: 'POST',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/statuses/([0-9a-f]{40})$`),
    body: {
      state: { type: 'string', values: ['pending', 'running', 'success', 'failed', 'canceled', 'skipped'], required: true },
      ref: { type: 'string' },
      name: { type: 'string' },
      context: { type: 'string' },
      target_url: { type: 'string' },
      description: { type: 'string' },
      coverage: { type: 'integer' },
      pipeline_id: { type: 'integer' },
    },
  },
  {
    name: 'List project merge requests',
    doc: 'https://docs.gitlab.com/api/merge_requests/#list-project-merge-requests',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/merge_requests$`),
    query: ['state', 'source_branch', 'target_branch', 'order_by', 'sort', 'iids[]', 'labels', 'milestone', 'view', ...PAGINATION],
  },
  {
    name: 'List all merge request notes',
    doc: 'https://docs.gitlab.com/api/notes/#list-all-merge-request-notes',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/merge_requests/([1-9]\\d*)/notes$`),
    query: ['sort', 'order_by', ...PAGINATION],
  },
  {
    name: 'Create new merge request note',
    doc: 'https://docs.gitlab.com/api/notes/#create-new-merge-request-note',
    method: 'POST',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/merge_requests/([1-9]\\d*)/notes$`),
    body: {
      body: { type: 'string', required: true },
      created_at: { type: 'string' },
      internal: { type: 'boolean' },
      merge_request_diff_head_sha: { type: 'string' },
    },
  },
  {
    name: 'Modify existing merge request note',
    doc: 'https://docs.gitlab.com/api/notes/#modify-existing-merge-request-note',
    method: 'PUT',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/merge_requests/([1-9]\\d*)/notes/([1-9]\\d*)$`),
    body: { body: { type: 'string', required: true } },
  },
];

/** What is wrong with a request by GitLab's documentation of its operation; none when it is a valid call. */
export function problemsWithGitLabRequest(request: GitLabRequest): string[] {
  const operation = DOCUMENTED.find((op) => op.method === request.method && op.path.test(request.path));
  if (!operation) return [`${request.method} ${request.path}: no such operation in GitLab's API documentation`];
  const problems: string[] = [];
  const where = `${operation.name} (${operation.doc})`;
  for (const name of request.query.keys()) if (!(operation.query ?? []).includes(name)) problems.push(`${where}: query parameter ${name} is not documented`);
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (operation.body === undefined && request.body !== undefined) problems.push(`${where}: takes no body`);
  for (const [name, field] of Object.entries(operation.body ?? {})) {
    const value = body[name];
    if (value === undefined) {
      if (field.required) problems.push(`${where}: ${name} is required`);
      continue;
    }
    const typed = field.type === 'integer' ? Number.isInteger(value) : typeof value === field.type;
    if (!typed) problems.push(`${where}: ${name} must be a ${field.type}`);
    if (field.values && !field.values.includes(value as string)) problems.push(`${where}: ${name} must be one of ${field.values.join(', ')}`);
  }
  for (const name of Object.keys(body)) if (!(name in (operation.body ?? {}))) problems.push(`${where}: body field ${name} is not documented`);
  return problems;
}

export async function startGitLab(): Promise<GitLabStandIn> {
  const statuses: GitLabStandIn['statuses'] = [];
  const notes: Note[] = [];
  const mergeRequests = new Map<string, { iid: number; target: string }>();
  let nextId = 5000;

  const answer = (request: GitLabRequest): [number, unknown] => {
    const { method, path } = request;
    if (request.headers['private-token'] === 'glpat-refused') return [401, { message: '401 Unauthorized' }];
    const body = (request.body ?? {}) as Record<string, string>;
    let match = /^\/api\/v4\/projects\/([^/]+)\/statuses\/([0-9a-f]+)$/.exec(path);
    if (method === 'POST' && match) {
      const status = {
        project: decodeURIComponent(match[1] as string),
        sha: match[2] as string,
        state: body.state as string,
        name: body.name as string,
        description: body.description as string,
        target_url: body.target_url as string,
        ...(body.ref ? { ref: body.ref } : {}),
      };
      statuses.push(status);
      return [201, { id: nextId++, sha: status.sha, status: status.state, name: status.name, target_url: status.target_url, description: status.description }];
    }
    if (method === 'GET' && /^\/api\/v4\/projects\/[^/]+\/merge_requests$/.test(path)) {
      const branch = request.query.get('source_branch') ?? '';
      const open = mergeRequests.get(branch);
      return [
        200,
        open && request.query.get('state') === 'opened'
          ? [{ id: open.iid + 100, iid: open.iid, source_branch: branch, target_branch: open.target, state: 'opened' }]
          : [],
      ];
    }
    match = /^\/api\/v4\/projects\/[^/]+\/merge_requests\/(\d+)\/notes$/.exec(path);
    if (match && method === 'GET') return [200, notes.filter((n) => n.iid === Number(match?.[1])).map((n) => ({ id: n.id, body: n.body, system: false }))];
    if (match && method === 'POST') {
      const note = { id: nextId++, iid: Number(match[1]), body: body.body as string };
      notes.push(note);
      return [201, { id: note.id, body: note.body, noteable_iid: note.iid, noteable_type: 'MergeRequest' }];
    }
    match = /^\/api\/v4\/projects\/[^/]+\/merge_requests\/(\d+)\/notes\/(\d+)$/.exec(path);
    if (match && method === 'PUT') {
      const note = notes.find((n) => n.id === Number(match?.[2]) && n.iid === Number(match?.[1]));
      if (!note) return [404, { message: '404 Not found' }];
      note.body = body.body as string;
      return [200, { id: note.id, body: note.body }];
    }
    return [404, { message: '404 Not Found' }];
  };

  const standIn = await startJsonStandIn(answer);
  return {
    url: `${standIn.origin}/api/v4`,
    requests: standIn.requests,
    statuses,
    notes,
    openMergeRequest: (branch, iid, target = 'main') => mergeRequests.set(branch, { iid, target }),
    close: standIn.close,
  };
}
