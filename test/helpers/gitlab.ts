import { createHash } from 'node:crypto';
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

/** An issue of a project, as the stand-in keeps it. */
export interface GitLabIssue {
  iid: number;
  title: string;
  description: string;
  state: 'opened' | 'closed';
  closed_at: string | null;
  labels: string[];
  notes: { id: number; body: string }[];
}

export interface GitLabStandIn {
  /** Where PROCTOR_GITLAB_API_URL points: `http://127.0.0.1:PORT/api/v4`. */
  url: string;
  requests: GitLabRequest[];
  issues: GitLabIssue[];
  /** A person closes the issue on GitLab. */
  closeIssue(iid: number): void;
  /** The next `count` requests of `method` on a path matching `path` are carried out, then answered 502 (the answer lost). */
  loseAnswersNext(method: string, path: RegExp, count: number): void;
  statuses: { project: string; sha: string; state: string; name: string; description: string; target_url: string; ref?: string }[];
  notes: Note[];
  /** An open merge request from `branch` into `target`. */
  openMergeRequest(branch: string, iid: number, target?: string): void;
  /** A branch of the project holding `files` (path to bytes); `main` is the default branch. */
  branch(name: string, files?: Record<string, Buffer>): void;
  /** The files on a branch (path to bytes), and the commits made through the API, in order. */
  filesOn(branch: string): Map<string, Buffer>;
  commits: { project: string; branch: string; id: string; message: string; actions: { action: string; file_path: string }[] }[];
  close(): Promise<void>;
}

type Field = {
  type: 'string' | 'integer' | 'boolean' | 'array';
  values?: string[];
  required?: boolean;
  /** An array's items: objects of these fields. */
  items?: Record<string, Field>;
};

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
  {
    name: 'Get a single project',
    doc: 'https://docs.gitlab.com/api/projects/#get-a-single-project',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}$`),
    query: ['license', 'statistics', 'with_custom_attributes'],
  },
  {
    name: 'Get file from repository',
    doc: 'https://docs.gitlab.com/api/repository_files/#get-file-from-repository',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/repository/files/[^/]+$`),
    query: ['ref'],
  },
  {
    name: 'Create a commit with multiple files and actions',
    doc: 'https://docs.gitlab.com/api/commits/#create-a-commit-with-multiple-files-and-actions',
    method: 'POST',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/repository/commits$`),
    body: {
      branch: { type: 'string', required: true },
      commit_message: { type: 'string', required: true },
      start_branch: { type: 'string' },
      start_sha: { type: 'string' },
      start_project: { type: 'string' },
      actions: {
        type: 'array',
        required: true,
        items: {
          action: { type: 'string', values: ['create', 'delete', 'move', 'update', 'chmod'], required: true },
          file_path: { type: 'string', required: true },
          previous_path: { type: 'string' },
          content: { type: 'string' },
          encoding: { type: 'string', values: ['text', 'base64'] },
          last_commit_id: { type: 'string' },
          execute_filemode: { type: 'boolean' },
        },
      },
      author_email: { type: 'string' },
      author_name: { type: 'string' },
      stats: { type: 'boolean' },
      force: { type: 'boolean' },
    },
  },
  {
    name: 'List project issues',
    doc: 'https://docs.gitlab.com/api/issues/#list-project-issues',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/issues$`),
    query: [
      'assignee_id',
      'assignee_username',
      'author_id',
      'author_username',
      'confidential',
      'created_after',
      'created_before',
      'due_date',
      'epic_id',
      'iids[]',
      'in',
      'issue_type',
      'iteration_id',
      'iteration_title',
      'labels',
      'milestone',
      'milestone_id',
      'my_reaction_emoji',
      'not',
      'order_by',
      'scope',
      'search',
      'sort',
      'state',
      'updated_after',
      'updated_before',
      'weight',
      'with_labels_details',
      ...PAGINATION,
    ],
  },
  {
    name: 'Create new issue',
    doc: 'https://docs.gitlab.com/api/issues/#new-issue',
    method: 'POST',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/issues$`),
    body: {
      title: { type: 'string', required: true },
      description: { type: 'string' },
      labels: { type: 'string' },
      confidential: { type: 'boolean' },
      created_at: { type: 'string' },
      due_date: { type: 'string' },
      issue_type: { type: 'string', values: ['issue', 'incident', 'test_case', 'task'] },
      milestone_id: { type: 'integer' },
      weight: { type: 'integer' },
      epic_id: { type: 'integer' },
      iid: { type: 'integer' },
    },
  },
  {
    name: 'Single project issue',
    doc: 'https://docs.gitlab.com/api/issues/#single-project-issue',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/issues/([1-9]\\d*)$`),
  },
  {
    name: 'Edit an issue',
    doc: 'https://docs.gitlab.com/api/issues/#edit-an-issue',
    method: 'PUT',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/issues/([1-9]\\d*)$`),
    body: {
      state_event: { type: 'string', values: ['close', 'reopen'] },
      title: { type: 'string' },
      description: { type: 'string' },
      labels: { type: 'string' },
      add_labels: { type: 'string' },
      remove_labels: { type: 'string' },
      confidential: { type: 'boolean' },
      discussion_locked: { type: 'boolean' },
      due_date: { type: 'string' },
      issue_type: { type: 'string', values: ['issue', 'incident', 'test_case', 'task'] },
      milestone_id: { type: 'integer' },
      updated_at: { type: 'string' },
      weight: { type: 'integer' },
    },
  },
  {
    name: 'List project issue notes',
    doc: 'https://docs.gitlab.com/api/notes/#list-project-issue-notes',
    method: 'GET',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/issues/([1-9]\\d*)/notes$`),
    query: ['sort', 'order_by', 'activity_filter', ...PAGINATION],
  },
  {
    name: 'Create new issue note',
    doc: 'https://docs.gitlab.com/api/notes/#create-new-issue-note',
    method: 'POST',
    path: new RegExp(`^/api/v4/projects/${PROJECT}/issues/([1-9]\\d*)/notes$`),
    body: {
      body: { type: 'string', required: true },
      created_at: { type: 'string' },
      internal: { type: 'boolean' },
    },
  },
];

/** What is wrong with `value` as `field` says, `name` naming it. */
function fieldProblems(where: string, name: string, field: Field, value: unknown): string[] {
  const problems: string[] = [];
  const typed = field.type === 'integer' ? Number.isInteger(value) : field.type === 'array' ? Array.isArray(value) : typeof value === field.type;
  if (!typed) return [`${where}: ${name} must be a${field.type === 'integer' || field.type === 'array' ? 'n' : ''} ${field.type}`];
  if (field.values && !field.values.includes(value as string)) problems.push(`${where}: ${name} must be one of ${field.values.join(', ')}`);
  if (field.items) {
    (value as Record<string, unknown>[]).forEach((item, index) => {
      for (const [key, itemField] of Object.entries(field.items ?? {})) {
        if (item[key] === undefined) {
          if (itemField.required) problems.push(`${where}: ${name}[${index}].${key} is required`);
        } else problems.push(...fieldProblems(where, `${name}[${index}].${key}`, itemField, item[key]));
      }
      for (const key of Object.keys(item)) if (!(key in (field.items ?? {}))) problems.push(`${where}: ${name}[${index}].${key} is not documented`);
    });
  }
  return problems;
}

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
    problems.push(...fieldProblems(where, name, field, value));
  }
  for (const name of Object.keys(body)) if (!(name in (operation.body ?? {}))) problems.push(`${where}: body field ${name} is not documented`);
  return problems;
}

export async function startGitLab(): Promise<GitLabStandIn> {
  const statuses: GitLabStandIn['statuses'] = [];
  const notes: Note[] = [];
  const mergeRequests = new Map<string, { iid: number; target: string }>();
  let nextId = 5000;
  const branches = new Map<string, Map<string, Buffer>>();
  const commits: GitLabStandIn['commits'] = [];
  const issues: GitLabIssue[] = [];
  let closings = 0;
  let losing: { method: string; path: RegExp; count: number } | null = null;
  const issueAnswer = (project: string, issue: GitLabIssue) => ({
    id: issue.iid + 90_000,
    iid: issue.iid,
    project_id: 1,
    title: issue.title,
    description: issue.description,
    state: issue.state,
    closed_at: issue.closed_at,
    labels: issue.labels,
    web_url: `https://gitlab.example/${decodeURIComponent(project)}/-/issues/${issue.iid}`,
  });

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
    const issuesOf = /^\/api\/v4\/projects\/([^/]+)\/issues$/.exec(path);
    if (issuesOf && method === 'GET') {
      const labels = (request.query.get('labels') ?? '').split(',').filter(Boolean);
      const search = request.query.get('search');
      const listed = issues.filter((i) => labels.every((l) => i.labels.includes(l)) && (!search || i.description.includes(search) || i.title.includes(search)));
      return [200, listed.toSorted((a, b) => b.iid - a.iid).map((i) => issueAnswer(issuesOf[1] as string, i))];
    }
    if (issuesOf && method === 'POST') {
      const issue: GitLabIssue = {
        iid: issues.length + 1,
        title: body.title as string,
        description: body.description ?? '',
        state: 'opened',
        closed_at: null,
        labels: (body.labels ?? '').split(',').filter(Boolean),
        notes: [],
      };
      issues.push(issue);
      return [201, issueAnswer(issuesOf[1] as string, issue)];
    }
    const issueOf = /^\/api\/v4\/projects\/([^/]+)\/issues\/(\d+)(\/notes)?$/.exec(path);
    if (issueOf) {
      const issue = issues.find((i) => i.iid === Number(issueOf[2]));
      if (!issue) return [404, { message: '404 Issue Not Found' }];
      if (issueOf[3] && method === 'GET') return [200, issue.notes.map((n) => ({ id: n.id, body: n.body, system: false, noteable_type: 'Issue' }))];
      if (issueOf[3] && method === 'POST') {
        const note = { id: nextId++, body: body.body as string };
        issue.notes.push(note);
        return [201, { ...note, noteable_iid: issue.iid, noteable_type: 'Issue' }];
      }
      if (method === 'PUT' && body.state_event) {
        const state = body.state_event === 'close' ? 'closed' : 'opened';
        if (state !== issue.state)
          Object.assign(issue, { state, closed_at: state === 'closed' ? new Date(Date.now() + ++closings * 1000).toISOString() : issue.closed_at });
      }
      return [200, issueAnswer(issueOf[1] as string, issue)];
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
    match = /^\/api\/v4\/projects\/([^/]+)$/.exec(path);
    if (match && method === 'GET') {
      const project = decodeURIComponent(match[1] as string);
      return [200, { id: 77, path_with_namespace: project, default_branch: 'main', web_url: `https://gitlab.example/${project}` }];
    }
    match = /^\/api\/v4\/projects\/([^/]+)\/repository\/files\/([^/]+)$/.exec(path);
    if (match && method === 'GET') {
      const file = decodeURIComponent(match[2] as string);
      const content = branches.get(request.query.get('ref') ?? '')?.get(file);
      if (!content) return [404, { message: '404 File Not Found' }];
      return [
        200,
        {
          file_name: file.split('/').pop(),
          file_path: file,
          size: content.length,
          encoding: 'base64',
          content: content.toString('base64'),
          ref: request.query.get('ref'),
        },
      ];
    }
    match = /^\/api\/v4\/projects\/([^/]+)\/repository\/commits$/.exec(path);
    if (match && method === 'POST') {
      const project = decodeURIComponent(match[1] as string);
      const { branch, commit_message: message, actions } = request.body as { branch: string; commit_message: string; actions: Record<string, string>[] };
      const files = branches.get(branch);
      if (!files) return [400, { message: 'You can only create or edit files when you are on a branch' }];
      for (const action of actions) {
        const there = files.has(action.file_path as string);
        if (action.action === 'create' && there) return [400, { message: 'A file with this name already exists' }];
        if (action.action === 'update' && !there) return [400, { message: "A file with this name doesn't exist" }];
        files.set(action.file_path as string, Buffer.from(action.content ?? '', action.encoding === 'base64' ? 'base64' : 'utf8'));
      }
      const id = createHash('sha1').update(`${commits.length}:${message}`).digest('hex');
      commits.push({ project, branch, id, message, actions: actions.map((a) => ({ action: a.action as string, file_path: a.file_path as string })) });
      return [201, { id, short_id: id.slice(0, 8), title: message.split('\n')[0], message, web_url: `https://gitlab.example/${project}/-/commit/${id}` }];
    }
    return [404, { message: '404 Not Found' }];
  };

  const answerOrLose = (request: GitLabRequest): [number, unknown] => {
    const answered = answer(request);
    if (losing && losing.count > 0 && request.method === losing.method && losing.path.test(request.path) && answered[0] < 300) {
      losing.count--;
      return [502, { message: '502 Bad Gateway' }];
    }
    return answered;
  };

  const standIn = await startJsonStandIn(answerOrLose);
  return {
    url: `${standIn.origin}/api/v4`,
    requests: standIn.requests,
    issues,
    closeIssue: (iid) => {
      const issue = issues.find((i) => i.iid === iid);
      if (issue) Object.assign(issue, { state: 'closed', closed_at: new Date(Date.now() + ++closings * 1000).toISOString() });
    },
    loseAnswersNext: (method, path, count) => {
      losing = { method, path, count };
    },
    statuses,
    notes,
    openMergeRequest: (branch, iid, target = 'main') => mergeRequests.set(branch, { iid, target }),
    branch: (name, files = {}) => branches.set(name, new Map(Object.entries(files))),
    filesOn: (branch) => new Map(branches.get(branch) ?? []),
    commits,
    close: standIn.close,
  };
}
