import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneCheckout, git, makeSuiteRepository, pngsUnder, reportChangedPage, type SuiteRepository, updatedByPlaywright } from '../helpers/baselines.ts';
import { bindRepository } from '../helpers/bindings.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { type GitLabStandIn, problemsWithGitLabRequest, startGitLab } from '../helpers/gitlab.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';

// Approved screenshots committed where Playwright looks for its baselines, for a suite whose
// config sits in a folder of the repository, with two Playwright projects: the paths are checked
// against what Playwright's own --update-snapshots writes on this machine.

const CLI = path.join(ROOT, 'reporter/dist/cli/main.js');
let server: TestServer;
let github: GitHubStandIn;
let gitlab: GitLabStandIn;
let repository: SuiteRepository;
/** What `--update-snapshots` wrote for the changed page: repository path to bytes. */
let updated: Map<string, Buffer>;

type Api = ReturnType<typeof client>;

/** The server's GitHub App, for destinations without a token of their own. */
const APP_ID = 5151;
const appKeys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
});

interface Commit {
  id: number;
  state: string;
  via: string | null;
  branch: string | null;
  commit_sha: string | null;
  commit_url: string | null;
  files: { change_id: number; path: string }[];
  error: string | null;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const baselinesOf = async (api: Api, runId: number) =>
  (await api.get(`/api/test-runs/${runId}/baselines`)).body.data as { files: { path: string | null }[]; commits: Commit[] };

/** The changed page reported into a new project's `local` (or the run `env.PROCTOR_RUN_ID`), all of its changes approved; the commit once the job is done with it. */
async function approvedRun(api: Api, key: string, env: Record<string, string>, runId?: number): Promise<{ runId: number; commit: Commit }> {
  const suite = await reportChangedPage(repository, server.url, key, env);
  expect(suite.exitCode, suite.output).toBe(1);
  const id = runId ?? (await api.get('/api/test-runs?environment=local')).body.data.test_runs[0].id;
  const changes = await until(
    async () => (await api.get(`/api/test-runs/${id}/visual-changes`)).body.data.counts.total as number,
    (total) => total === 4,
  );
  expect(changes).toBe(4);
  const reviewed = await api.post(`/api/test-runs/${id}/visual-changes/review`, { review: 'approved' });
  expect(reviewed.status, JSON.stringify(reviewed.body)).toBe(200);
  const { commits } = await until(
    () => baselinesOf(api, id),
    (b) => b.commits.length > 0 && b.commits[0]?.state !== 'queued',
  );
  return { runId: id, commit: commits[0] as Commit };
}

const CI = (branch: string, sha: string) => ({ CI_PIPELINE_ID: String(Date.now()), CI_COMMIT_SHA: sha, CI_COMMIT_BRANCH: branch });

beforeAll(async () => {
  [github, gitlab] = await Promise.all([startGitHub(), startGitLab()]);
  server = await startTestServer({
    env: {
      PROCTOR_GITHUB_API_URL: github.url,
      PROCTOR_GITLAB_API_URL: gitlab.url,
      PROCTOR_GITHUB_APP_ID: String(APP_ID),
      PROCTOR_GITHUB_APP_PRIVATE_KEY: appKeys.privateKey.replace(/\n/g, '\\n'),
    },
  });
  repository = await makeSuiteRepository();
  updated = await updatedByPlaywright(repository);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await Promise.all([github?.close(), gitlab?.close()]);
  if (repository)
    for (const dir of fs.readdirSync(path.dirname(repository.dir))) {
      if (dir.startsWith(path.basename(repository.dir))) fs.rmSync(path.join(path.dirname(repository.dir), dir), { recursive: true, force: true });
    }
});

describe('the paths of approved baselines', () => {
  it("when Playwright updates the changed page's snapshots, then it rewrites the four committed baselines, two per project, the platform in their names", () => {
    expect([...updated.keys()].sort()).toEqual([...repository.baselines.keys()].sort());
    expect(updated.size).toBe(4);
    expect([...updated.keys()].filter((file) => file.endsWith(`-Narrow-Phone-${process.platform}.png`))).toHaveLength(2);
    for (const [file, bytes] of updated) expect(bytes.equals(repository.baselines.get(file) as Buffer), file).toBe(false);
  });
});

describe('approved baselines committed through GitHub', () => {
  let api: Api;
  let result: { runId: number; commit: Commit };

  beforeAll(async () => {
    const project = await seedProject(server.sql);
    await seedEnvironment(server.sql, project.projectId, 'local');
    api = client(server.url, project.key);
    expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).status).toBe(201);
    github.branch('main', Object.fromEntries(repository.baselines));
    github.branch('feature-x', Object.fromEntries(repository.baselines));
    result = await approvedRun(api, project.key, CI('feature-x', repository.featureHead));
  }, 150_000);

  it('when all changes are approved, then one commit on feature-x writes the new images at the paths --update-snapshots writes', () => {
    expect(result.commit).toMatchObject({ state: 'committed', via: 'github', branch: 'feature-x', error: null });
    const [made, before] = github.commitsOn('feature-x');
    expect(made?.sha).toBe(result.commit.commit_sha);
    expect(made?.parents).toEqual([before?.sha]);
    expect(result.commit.commit_url).toBe(`https://github.com/acme/shop/commit/${made?.sha}`);
    const files = github.filesOn('feature-x');
    expect(result.commit.files.map((f) => f.path).sort()).toEqual([...updated.keys()].sort());
    for (const [file, bytes] of updated) expect(files.get(file)?.equals(bytes), file).toBe(true);
  });

  it("when Proctor calls GitHub's git data API, then every request is one GitHub's description has, its body as described", () => {
    const gitRequests = github.requests.filter((r) => r.path.includes('/git/'));
    expect(gitRequests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{40}/, 'SHA')}`)).toEqual([
      'GET /repos/acme/shop/git/ref/heads%2Ffeature-x',
      'GET /repos/acme/shop/git/commits/SHA',
      'POST /repos/acme/shop/git/blobs',
      'POST /repos/acme/shop/git/blobs',
      'POST /repos/acme/shop/git/blobs',
      'POST /repos/acme/shop/git/blobs',
      'POST /repos/acme/shop/git/trees',
      'POST /repos/acme/shop/git/commits',
      'PATCH /repos/acme/shop/git/refs/heads%2Ffeature-x',
    ]);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  });

  it('when the review page is opened, then it links the commit', async () => {
    const [row] = await server.sql<{ project_id: number }[]>`select project_id from test_runs where id = ${result.runId}`;
    const member = await seedUser(server.sql, [row?.project_id as number], { role: 'member' });
    const token = await createLoginLink(server.sql, member.userId, server.clock.now);
    const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
    const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    const page = await fetch(`${server.url}/projects/${row?.project_id}/runs/${result.runId}/visual`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<a href="${result.commit.commit_url}" data-baseline-commit>${result.commit.commit_sha?.slice(0, 12)}</a>`);
  });
});

describe("approved baselines committed through the server's GitHub App", () => {
  it('when the GitHub destination has no token and an instance admin bound its repository, then the App commits the new images with a token for that repository alone', async () => {
    github.installApp(APP_ID, appKeys.publicKey, 77, ['acme/shop']);
    const project = await seedProject(server.sql);
    await seedEnvironment(server.sql, project.projectId, 'local');
    await bindRepository(server.sql, server.url, project.projectId, 'github', 'acme/shop');
    const api = client(server.url, project.key);
    const destination = await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop' });
    expect(destination.status, destination.text).toBe(201);
    // The branch as it was before any approval: the images are new to it again.
    github.branch('feature-x', Object.fromEntries(repository.baselines));
    const head = github.commitsOn('feature-x')[0]?.sha;
    const tokensBefore = github.tokenRepositories.length;

    const { commit } = await approvedRun(api, project.key, CI('feature-x', repository.featureHead));

    expect(commit).toMatchObject({ state: 'committed', via: 'github', branch: 'feature-x', error: null });
    const [made] = github.commitsOn('feature-x');
    expect(made?.sha).toBe(commit.commit_sha);
    expect(made?.parents).toEqual([head]);
    // The stand-in answers 401 to any token but a ghp_ one or the installation token it minted.
    expect(github.tokenRepositories.slice(tokensBefore)).toEqual([['shop']]);
    const files = github.filesOn('feature-x');
    for (const [file, bytes] of updated) expect(files.get(file)?.equals(bytes), file).toBe(true);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  }, 150_000);
});

describe('approved baselines committed through GitLab', () => {
  it("when all changes are approved, then one commit through GitLab's commits API updates the four files, each request as GitLab documents it", async () => {
    const project = await seedProject(server.sql);
    await seedEnvironment(server.sql, project.projectId, 'local');
    const api = client(server.url, project.key);
    expect((await api.post('/api/notification-destinations', { type: 'gitlab', project: 'acme/web/shop', token: 'glpat-test' })).status).toBe(201);
    gitlab.branch('feature-x', Object.fromEntries(repository.baselines));
    const { commit } = await approvedRun(api, project.key, CI('feature-x', repository.featureHead));
    expect(commit).toMatchObject({ state: 'committed', via: 'gitlab', branch: 'feature-x' });
    expect(gitlab.commits).toHaveLength(1);
    expect(gitlab.commits[0]?.actions.map((a) => [a.action, a.file_path]).sort()).toEqual([...updated.keys()].sort().map((file) => ['update', file]));
    expect(commit.commit_url).toBe(`https://gitlab.example/acme/web/shop/-/commit/${gitlab.commits[0]?.id}`);
    const files = gitlab.filesOn('feature-x');
    for (const [file, bytes] of updated) expect(files.get(file)?.equals(bytes), file).toBe(true);
    expect(gitlab.requests.flatMap(problemsWithGitLabRequest)).toEqual([]);
  }, 150_000);
});

describe("approved baselines pushed to the project's repository", () => {
  let api: Api;
  let key: string;
  let runId: number;

  beforeAll(async () => {
    const project = await seedProject(server.sql);
    key = project.key;
    await seedEnvironment(server.sql, project.projectId, 'local');
    await server.sql`update projects set repo_url = ${repository.remote} where id = ${project.projectId}`;
    api = client(server.url, project.key);
    // Triggered by Proctor (no executor here): the suite reports into the run, as an executor's shards do.
    const triggered = await api.put('/api/test-runs', { environment: 'local', branch: 'feature-x' });
    expect(triggered.status, JSON.stringify(triggered.body)).toBeLessThan(300);
    runId = triggered.body.data.test_run.id;
  }, 30_000);

  it('when Proctor triggered the run from the repository and all changes are approved, then one commit on feature-x is pushed with the files --update-snapshots writes', async () => {
    const { commit } = await approvedRun(api, key, { PROCTOR_RUN_ID: String(runId), PROCTOR_ENVIRONMENT: '' }, runId);
    expect(commit).toMatchObject({ state: 'committed', via: 'git', branch: 'feature-x', commit_url: null });
    expect(git(repository.remote, 'rev-parse', 'feature-x')).toBe(commit.commit_sha);
    expect(git(repository.remote, 'rev-parse', 'feature-x^')).toBe(repository.featureHead);
    expect(git(repository.remote, 'rev-parse', 'main')).not.toBe(commit.commit_sha);
    const changed = git(repository.remote, 'diff', '--name-only', 'feature-x^', 'feature-x').split('\n').sort();
    expect(changed).toEqual([...updated.keys()].sort());
    for (const [file, bytes] of updated) {
      const pushed = await promisify(execFile)('git', ['show', `feature-x:${file}`], { cwd: repository.remote, encoding: 'buffer', maxBuffer: 1 << 24 });
      expect((pushed.stdout as Buffer).equals(bytes), file).toBe(true);
    }
  }, 150_000);

  it('when `proctor-ci snapshots pull` writes the approved images into a checkout, then its files equal what --update-snapshots writes', async () => {
    const checkout = cloneCheckout(repository, 'pulled');
    git(checkout, 'checkout', '--quiet', repository.featureHead);
    const pulled = await promisify(execFile)(process.execPath, [CLI, 'snapshots', 'pull', String(runId)], {
      cwd: path.join(checkout, 'e2e', 'tests'),
      env: { ...process.env, PROCTOR_URL: server.url, PROCTOR_API_KEY: key },
    });
    expect(pulled.stdout.split('\n').filter(Boolean).sort()).toEqual([...updated.keys()].sort().map((file) => `wrote ${file}`));
    const after = pngsUnder(checkout);
    expect([...after.keys()].sort()).toEqual([...repository.baselines.keys()].sort());
    for (const [file, bytes] of updated) expect(after.get(file)?.equals(bytes), file).toBe(true);
  }, 60_000);
});

describe('the default branch', () => {
  it("when the run's branch is the default one, then the commit is refused until the project allows it, and then made", async () => {
    const project = await seedProject(server.sql);
    await seedEnvironment(server.sql, project.projectId, 'local');
    const api = client(server.url, project.key);
    expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).status).toBe(201);
    const mainHead = github.commitsOn('main')[0]?.sha;
    const blobsBefore = github.requests.filter((r) => r.path.endsWith('/git/blobs')).length;
    const { runId, commit } = await approvedRun(api, project.key, CI('main', repository.featureHead));
    expect(commit.state).toBe('refused');
    expect(commit.error).toMatch(/^main is the repository's default branch/);
    expect(github.commitsOn('main')[0]?.sha).toBe(mainHead);
    expect(github.requests.filter((r) => r.path.endsWith('/git/blobs')).length).toBe(blobsBefore);

    const allowed = await api.patch('/api/project', { baselines_to_default_branch: true });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    const again = await api.post(`/api/test-runs/${runId}/baselines/commit`, {});
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    const { commits } = await until(
      () => baselinesOf(api, runId),
      (b) => b.commits[0]?.state !== 'queued',
    );
    expect(commits[0]).toMatchObject({ state: 'committed', branch: 'main' });
    expect(github.commitsOn('main')[0]?.sha).toBe(commits[0]?.commit_sha);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  }, 150_000);
});
