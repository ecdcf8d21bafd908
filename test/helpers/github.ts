import { verify } from 'node:crypto';
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

export interface GitHubStandIn {
  url: string;
  requests: GitHubRequest[];
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
  close(): Promise<void>;
}

export async function startGitHub(): Promise<GitHubStandIn> {
  const statuses: GitHubStandIn['statuses'] = [];
  const comments: Comment[] = [];
  const pulls = new Map<string, { number: number; defaultBranch: string; bare: boolean }>();
  let repositoryDefault = 'main';
  let failingComments = { count: 0, status: 502 };
  let nextId = 1000;
  let app: { appId: number; publicKey: string; installationId: number; repositories: string[] | null } | null = null;
  const tokenRepositories: (string[] | null)[] = [];
  const granted = (repository: string) => app?.repositories === null || (app?.repositories ?? []).some((r) => r.toLowerCase() === repository.toLowerCase());
  const installationToken = 'ghs_an-installation-token';

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
    if (method === 'GET' && /^\/repos\/[^/]+\/[^/]+$/.test(path))
      return [200, { id: 1, full_name: path.slice('/repos/'.length), default_branch: repositoryDefault }];
    if (/\/comments/.test(path) && method !== 'GET' && failingComments.count > 0) {
      failingComments.count--;
      return [failingComments.status, { message: 'Server Error' }];
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

  const standIn = await startJsonStandIn(answer, 'application/json; charset=utf-8');
  return {
    url: standIn.origin,
    requests: standIn.requests,
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
    close: standIn.close,
  };
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
    const validate = ajv.compile({ ...schema, components: (githubDescription() as unknown as { components: object }).components });
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
