import { createHash, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { startJsonStandIn, type StandInRequest } from './stand-in.ts';

// GitHub's REST API cannot be reached from here: a stand-in on loopback answers the few routes
// Proctor calls and records every request, and each recorded request is checked against GitHub's
// own published OpenAPI description (@octokit/openapi): the operation exists for that method and
// path, its query names parameters of the operation, and its JSON body matches the schema.

export type GitHubRequest = StandInRequest;

interface Comment {
  id: number;
  issue: number;
  body: string;
}

/** An issue of the repository, as the stand-in keeps it. */
export interface Issue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  closed_at: string | null;
  labels: string[];
}

export interface GitHubStandIn {
  url: string;
  requests: GitHubRequest[];
  /** The repository's issues (numbered from 100, apart from pull requests' numbers). */
  issues: Issue[];
  /** An issue someone filed (or closed) on GitHub itself. */
  fileIssue(title: string, state?: 'open' | 'closed'): Issue;
  /** A person closes the issue on GitHub. */
  closeIssue(number: number): void;
  /**
   * The next `count` requests of `method` on a path matching `path` are carried out, and then
   * answered 502: what a client sees when GitHub's answer is lost on the way.
   */
  loseAnswersNext(method: string, path: RegExp, count: number): void;
  statuses: { sha: string; state: string; context: string; description: string; target_url: string }[];
  comments: Comment[];
  /**
   * An open pull request from `branch`, into a repository whose default branch is `defaultBranch`;
   * `bare`: its answer leaves out `base.repo`, which GitHub's description allows.
   */
  openPull(branch: string, number: number, defaultBranch?: string, bare?: boolean): void;
  /** The next `count` comment creations and edits are answered `status`. */
  failCommentsNext(count: number, status: number): void;
  /**
   * A GitHub App, installed as `installationId` on `repositories` (owner/name; every repository
   * when not given): its JWTs are checked with `publicKey`.
   */
  installApp(appId: number, publicKey: string, installationId: number, repositories?: string[]): void;
  /** The repositories each installation token was asked for (`repositories` of the request; null: all the installation's). */
  tokenRepositories: (string[] | null)[];
  /** A branch of the repository at a first commit holding `files` (path to bytes). */
  branch(name: string, files?: Record<string, Buffer>): void;
  /** The files on a branch at its head (path to bytes), and its commits' messages, the newest first. */
  filesOn(branch: string): Map<string, Buffer>;
  commitsOn(branch: string): { sha: string; message: string; parents: string[] }[];
  close(): Promise<void>;
}

/** A git repository as GitHub's git data API shows it: blobs, trees as flat path maps, commits, branches. */
class GitData {
  readonly blobs = new Map<string, Buffer>();
  readonly trees = new Map<string, Map<string, string>>();
  readonly commits = new Map<string, { tree: string; parents: string[]; message: string }>();
  readonly heads = new Map<string, string>();

  private static sha(kind: string, content: Buffer | string): string {
    return createHash('sha1').update(`${kind}\0`).update(content).digest('hex');
  }

  blob(content: Buffer): string {
    const sha = GitData.sha('blob', content);
    this.blobs.set(sha, content);
    return sha;
  }

  tree(entries: Map<string, string>): string {
    const sha = GitData.sha('tree', JSON.stringify([...entries].sort()));
    this.trees.set(sha, entries);
    return sha;
  }

  commit(tree: string, parents: string[], message: string): string {
    const sha = GitData.sha('commit', JSON.stringify([tree, parents, message, this.commits.size]));
    this.commits.set(sha, { tree, parents, message });
    return sha;
  }
}

export async function startGitHub(): Promise<GitHubStandIn> {
  const statuses: GitHubStandIn['statuses'] = [];
  const comments: Comment[] = [];
  const pulls = new Map<string, { number: number; defaultBranch: string; bare: boolean }>();
  let repositoryDefault = 'main';
  let failingComments = { count: 0, status: 502 };
  let nextId = 1000;
  const issues: Issue[] = [];
  let nextIssue = 100;
  let closings = 0;
  let losing: { method: string; path: RegExp; count: number } | null = null;
  const issueAnswer = (issue: Issue, repository: string) => ({
    id: issue.number + 50_000,
    number: issue.number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    closed_at: issue.closed_at,
    labels: issue.labels.map((name) => ({ name })),
    html_url: `https://github.com/${repository}/issues/${issue.number}`,
  });
  let app: { appId: number; publicKey: string; installationId: number; repositories: string[] | null } | null = null;
  const tokenRepositories: (string[] | null)[] = [];
  const granted = (repository: string) => app?.repositories === null || (app?.repositories ?? []).some((r) => r.toLowerCase() === repository.toLowerCase());
  const installationToken = 'ghs_an-installation-token';
  const git = new GitData();

  /** A JWT the App signed (RS256, issued by its id, not expired). */
  const signedByApp = (authorization: string | string[] | undefined): boolean => {
    const jwt = /^bearer (.+)$/i.exec(String(authorization ?? ''))?.[1];
    if (!app || !jwt) return false;
    const [header, payload, signature] = jwt.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss: string | number; exp: number };
    const signed = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), app.publicKey, Buffer.from(signature, 'base64url'));
    return signed && String(claims.iss) === String(app.appId) && claims.exp * 1000 > Date.now();
  };

  const answer = (request: GitHubRequest): [number, unknown] => {
    const { method, path } = request;
    if (request.headers.authorization === 'token ghp_refused') return [401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }];
    const installationOf = /^\/repos\/([^/]+\/[^/]+)\/installation$/.exec(path);
    if (method === 'GET' && installationOf) {
      if (!signedByApp(request.headers.authorization)) return [401, { message: 'A JSON web token could not be decoded' }];
      return granted(installationOf[1] as string) ? [200, { id: app?.installationId, app_id: app?.appId }] : [404, { message: 'Not Found' }];
    }
    if (method === 'POST' && path === `/app/installations/${app?.installationId}/access_tokens`) {
      if (!signedByApp(request.headers.authorization)) return [401, { message: 'A JSON web token could not be decoded' }];
      // `repositories` are names without their owner, within the installation's.
      const asked = ((request.body ?? {}) as { repositories?: string[] }).repositories ?? null;
      tokenRepositories.push(asked);
      const selection = asked === null ? 'all' : 'selected';
      if (asked && app?.repositories && !asked.every((name) => app?.repositories?.some((r) => r.split('/')[1]?.toLowerCase() === name.toLowerCase())))
        return [422, { message: 'There is at least one repository that does not exist or is not accessible to the parent installation.' }];
      return [201, { token: installationToken, expires_at: new Date(Date.now() + 3_600_000).toISOString(), permissions: {}, repository_selection: selection }];
    }
    if (app && !String(request.headers.authorization).startsWith('token ghp_') && request.headers.authorization !== `token ${installationToken}`) {
      return [401, { message: 'Bad credentials' }];
    }
    const body = request.body as Record<string, string>;
    let match = /^\/repos\/[^/]+\/[^/]+\/statuses\/([0-9a-f]+)$/.exec(path);
    if (method === 'POST' && match) {
      statuses.push({
        sha: match[1] as string,
        state: body.state as string,
        context: body.context as string,
        description: body.description as string,
        target_url: body.target_url as string,
      });
      return [201, { id: nextId++, state: body.state, context: body.context }];
    }
    if (method === 'GET' && /^\/repos\/[^/]+\/[^/]+\/pulls$/.test(path)) {
      const branch = (request.query.get('head') ?? '').split(':')[1] ?? '';
      const pull = pulls.get(branch);
      if (!pull) return [200, []];
      return [
        200,
        [
          {
            number: pull.number,
            head: { ref: branch },
            base: pull.bare ? { ref: pull.defaultBranch } : { ref: pull.defaultBranch, repo: { default_branch: pull.defaultBranch } },
          },
        ],
      ];
    }
    const gitAnswer = gitDataAnswer(git, method, path, request.body as Record<string, unknown> | undefined);
    if (gitAnswer) return gitAnswer;
    if (method === 'GET' && /^\/repos\/[^/]+\/[^/]+$/.test(path))
      return [200, { id: 1, full_name: path.slice('/repos/'.length), default_branch: repositoryDefault }];
    if (/\/comments/.test(path) && method !== 'GET' && failingComments.count > 0) {
      failingComments.count--;
      return [failingComments.status, { message: 'Server Error' }];
    }
    const issuesOf = /^\/repos\/([^/]+\/[^/]+)\/issues$/.exec(path);
    if (issuesOf && method === 'GET') {
      const labels = (request.query.get('labels') ?? '').split(',').filter(Boolean);
      const state = request.query.get('state') ?? 'open';
      const listed = issues
        .filter((i) => labels.every((label) => i.labels.includes(label)) && (state === 'all' || i.state === state))
        .toSorted((a, b) => b.number - a.number);
      return [200, listed.map((i) => issueAnswer(i, issuesOf[1] as string))];
    }
    if (issuesOf && method === 'POST') {
      const given = request.body as { title: string; body?: string; labels?: string[] };
      const issue: Issue = { number: nextIssue++, title: given.title, body: given.body ?? '', state: 'open', closed_at: null, labels: given.labels ?? [] };
      issues.push(issue);
      return [201, issueAnswer(issue, issuesOf[1] as string)];
    }
    const issueOf = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(path);
    if (issueOf) {
      const issue = issues.find((i) => i.number === Number(issueOf[2]));
      if (!issue) return [404, { message: 'Not Found' }];
      if (method === 'PATCH') {
        const change = request.body as { state?: 'open' | 'closed' };
        if (change.state && change.state !== issue.state) {
          issue.state = change.state;
          issue.closed_at = change.state === 'closed' ? new Date().toISOString() : issue.closed_at;
        }
      }
      if (method === 'GET' || method === 'PATCH') return [200, issueAnswer(issue, issueOf[1] as string)];
    }
    match = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/.exec(path);
    if (match && method === 'GET') return [200, comments.filter((c) => c.issue === Number(match?.[1]))];
    if (match && method === 'POST') {
      const comment = { id: nextId++, issue: Number(match[1]), body: body.body as string };
      comments.push(comment);
      return [201, comment];
    }
    match = /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(path);
    if (match && method === 'PATCH') {
      const comment = comments.find((c) => c.id === Number(match?.[1]));
      if (!comment) return [404, { message: 'Not Found' }];
      comment.body = body.body as string;
      return [200, comment];
    }
    return [404, { message: 'Not Found' }];
  };

  const answerOrLose = (request: GitHubRequest): [number, unknown] => {
    const answered = answer(request);
    if (losing && losing.count > 0 && request.method === losing.method && losing.path.test(request.path) && answered[0] < 300) {
      losing.count--;
      return [502, { message: 'Server Error' }];
    }
    return answered;
  };

  const standIn = await startJsonStandIn(answerOrLose, 'application/json; charset=utf-8');
  return {
    url: standIn.origin,
    requests: standIn.requests,
    issues,
    fileIssue: (title, state = 'open') => {
      const issue: Issue = { number: nextIssue++, title, body: '', state, closed_at: state === 'closed' ? new Date().toISOString() : null, labels: [] };
      issues.push(issue);
      return issue;
    },
    closeIssue: (number) => {
      const issue = issues.find((i) => i.number === number);
      // Each closing at a time of its own, as GitHub's are.
      if (issue) Object.assign(issue, { state: 'closed', closed_at: new Date(Date.now() + ++closings * 1000).toISOString() });
    },
    loseAnswersNext: (method, path, count) => {
      losing = { method, path, count };
    },
    statuses,
    comments,
    openPull: (branch, number, defaultBranch = 'main', bare = false) => {
      pulls.set(branch, { number, defaultBranch, bare });
      repositoryDefault = defaultBranch;
    },
    failCommentsNext: (count, status) => {
      failingComments = { count, status };
    },
    installApp: (appId, publicKey, installationId, repositories) => {
      app = { appId, publicKey, installationId, repositories: repositories ?? null };
    },
    tokenRepositories,
    branch: (name, files = {}) => {
      const entries = new Map(Object.entries(files).map(([file, content]) => [file, git.blob(content)]));
      git.heads.set(name, git.commit(git.tree(entries), [], `the first commit of ${name}`));
    },
    filesOn: (branch) => {
      const head = git.commits.get(git.heads.get(branch) ?? '');
      const tree = git.trees.get(head?.tree ?? '') ?? new Map<string, string>();
      return new Map([...tree].map(([file, blob]) => [file, git.blobs.get(blob) as Buffer]));
    },
    commitsOn: (branch) => {
      const found: { sha: string; message: string; parents: string[] }[] = [];
      for (let sha = git.heads.get(branch); sha; sha = git.commits.get(sha)?.parents[0]) {
        const commit = git.commits.get(sha);
        if (commit) found.push({ sha, message: commit.message, parents: commit.parents });
      }
      return found;
    },
    close: standIn.close,
  };
}

/** The git data routes (https://docs.github.com/rest/git): refs, commits, blobs and trees; null for any other request. */
function gitDataAnswer(git: GitData, method: string, path: string, body: Record<string, unknown> | undefined): [number, unknown] | null {
  const match = /^\/repos\/([^/]+\/[^/]+)\/git\/(ref|refs|commits|blobs|trees)(?:\/([^/]+))?$/.exec(path);
  if (!match) return null;
  const [, repository, kind, rawId] = match as unknown as [string, string, string, string | undefined];
  const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  const url = (what: string, sha: string) => `https://api.github.com/repos/${repository}/git/${what}/${sha}`;
  const branchOf = (ref: string | undefined) => (ref?.startsWith('heads/') ? ref.slice('heads/'.length) : null);
  if (method === 'GET' && kind === 'ref') {
    const branch = branchOf(id);
    const sha = branch === null ? undefined : git.heads.get(branch);
    if (!sha) return [404, { message: 'Not Found' }];
    return [200, { ref: `refs/${id}`, node_id: 'REF', url: url('refs', id as string), object: { type: 'commit', sha, url: url('commits', sha) } }];
  }
  if (method === 'GET' && kind === 'commits' && id) {
    const commit = git.commits.get(id);
    if (!commit) return [404, { message: 'Not Found' }];
    return [
      200,
      { sha: id, message: commit.message, tree: { sha: commit.tree, url: url('trees', commit.tree) }, parents: commit.parents.map((sha) => ({ sha })) },
    ];
  }
  if (method === 'POST' && kind === 'blobs' && !id) {
    const content = Buffer.from(String(body?.content ?? ''), body?.encoding === 'base64' ? 'base64' : 'utf8');
    const sha = git.blob(content);
    return [201, { sha, url: url('blobs', sha) }];
  }
  if (method === 'POST' && kind === 'trees' && !id) {
    const base = git.trees.get(String(body?.base_tree ?? '')) ?? new Map<string, string>();
    const entries = new Map(base);
    for (const entry of (body?.tree ?? []) as { path: string; sha: string }[]) entries.set(entry.path, entry.sha);
    const sha = git.tree(entries);
    return [
      201,
      { sha, url: url('trees', sha), tree: [...entries].map(([file, blob]) => ({ path: file, mode: '100644', type: 'blob', sha: blob })), truncated: false },
    ];
  }
  if (method === 'POST' && kind === 'commits' && !id) {
    const tree = String(body?.tree ?? '');
    if (!git.trees.has(tree)) return [422, { message: 'Tree SHA does not exist' }];
    const sha = git.commit(tree, (body?.parents ?? []) as string[], String(body?.message ?? ''));
    return [201, { sha, html_url: `https://github.com/${repository}/commit/${sha}`, message: body?.message, tree: { sha: tree } }];
  }
  if (method === 'PATCH' && kind === 'refs' && id) {
    const branch = branchOf(id);
    const head = branch === null ? undefined : git.heads.get(branch);
    if (!head || branch === null) return [422, { message: 'Reference does not exist' }];
    const sha = String(body?.sha ?? '');
    // Without force, the new commit must have the branch's head as an ancestor.
    let reaches = false;
    for (let at: string | undefined = sha; at && !reaches; at = git.commits.get(at)?.parents[0]) reaches = at === head;
    if (!reaches && body?.force !== true) return [422, { message: 'Update is not a fast forward' }];
    git.heads.set(branch, sha);
    return [200, { ref: `refs/${id}`, object: { type: 'commit', sha } }];
  }
  return [404, { message: 'Not Found' }];
}

type OpenApiParameter = { name: string; in: string; $ref?: string };
type Operation = { parameters?: OpenApiParameter[]; requestBody?: { required?: boolean; content: Record<string, { schema: object }> } };
type Description = { paths: Record<string, Record<string, Operation>>; components: { parameters: Record<string, OpenApiParameter> } };

let description: Description | null = null;
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });

function githubDescription(): Description {
  description ??= createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as Description;
  return description;
}

/** The operation of GitHub's description that a request is, with its path template. */
function operationOf(method: string, path: string): { template: string; operation: Operation } | null {
  for (const [template, operations] of Object.entries(githubDescription().paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const operation = operations[method.toLowerCase()];
    if (operation && pattern.test(path)) return { template, operation };
  }
  return null;
}

/**
 * The schema as Ajv reads it: OpenAPI 3.0's `nullable` beside a `oneOf` (no `type` of its own, as
 * the issues' `milestone` and `title` have it) made the `anyOf` with null that it means.
 */
function withNullables(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withNullables);
  if (schema === null || typeof schema !== 'object') return schema;
  const entries = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withNullables(value)]));
  if (entries.nullable !== true || 'type' in entries) return entries;
  const { nullable: _nullable, ...rest } = entries;
  return { anyOf: [rest, { type: 'null' }] };
}

/** What is wrong with a recorded request by GitHub's published description; empty when nothing is. */
export function problemsWithGitHubRequest(request: GitHubRequest): string[] {
  const found = operationOf(request.method, request.path);
  if (!found) return [`${request.method} ${request.path}: no such operation in GitHub's REST API`];
  const { template, operation } = found;
  const problems: string[] = [];
  const parameters = (operation.parameters ?? []).map(
    (p) => (p.$ref ? githubDescription().components.parameters[p.$ref.split('/').pop() as string] : p) as OpenApiParameter,
  );
  const queryNames = new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name));
  for (const name of request.query.keys()) if (!queryNames.has(name)) problems.push(`${template}: query parameter "${name}" is not the operation's`);
  const schema = operation.requestBody?.content['application/json']?.schema;
  if (schema && (request.body !== undefined || operation.requestBody?.required)) {
    const validate = ajv.compile(withNullables({ ...schema, components: (githubDescription() as unknown as { components: object }).components }) as object);
    if (!validate(request.body)) problems.push(`${template}: ${ajv.errorsText(validate.errors)}`);
  } else if (!schema && request.body !== undefined) {
    problems.push(`${template}: the operation takes no body`);
  }
  // Without the header GitHub answers as its 2022-11-28 version; with one, it must be a version it has.
  const version = request.headers['x-github-api-version'];
  if (version !== undefined && version !== '2022-11-28') problems.push(`${template}: X-GitHub-Api-Version ${String(version)} is not a version of the REST API`);
  if (!String(request.headers.accept ?? '').includes('application/vnd.github')) problems.push(`${template}: Accept is not GitHub's media type`);
  return problems;
}
