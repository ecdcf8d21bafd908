import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitLabStandIn, problemsWithGitLabRequest, startGitLab } from '../helpers/gitlab.ts';
import { client } from '../helpers/http.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';
import { runVisualSuite, type VisualSuite } from '../helpers/visual.ts';

// The `proctor/visual` commit status and the merge request note's visual line on GitLab (issue 57,
// point 2), end to end: a real Playwright suite's two screenshot changes reported from a GitLab
// pipeline, reviewed, and every request Proctor made checked against GitLab's API documentation.

let server: TestServer;
let suite: VisualSuite;
let runId: number;
let projectId: number;
let api: ReturnType<typeof client>;
let gitlab: GitLabStandIn;
const COMMIT = 'd'.repeat(40);

interface Change {
  id: number;
  title: string;
}

const visualStatuses = () => gitlab.statuses.filter((s) => s.name === 'proctor/visual').map((s) => [s.sha, s.state, s.description, s.ref]);

/** The `proctor/visual` statuses sent, once the last one is `state` (or 20 s passed). */
async function statusesUntil(state: string, description?: string): Promise<(string | undefined)[][]> {
  const reached = () => visualStatuses().at(-1)?.[1] === state && (description === undefined || visualStatuses().at(-1)?.[2] === description);
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && !reached();) await new Promise((resolve) => setTimeout(resolve, 100));
  return visualStatuses();
}

/** The merge request note's line on visual changes, once it matches `line` (or 20 s passed). */
async function noteLineUntil(line: RegExp): Promise<string | undefined> {
  const read = () =>
    gitlab.notes
      .find((n) => n.iid === 12)
      ?.body.split('\n')
      .find((l) => l.startsWith('**Visual changes:**'));
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && !line.test(read() ?? '');) await new Promise((resolve) => setTimeout(resolve, 100));
  return read();
}

async function changesOf(): Promise<{ visual_changes: (Change & { comparison: { status: string } })[]; counts: Record<string, number> }> {
  const response = await api.get(`/api/test-runs/${runId}/visual-changes`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

beforeAll(async () => {
  gitlab = await startGitLab();
  server = await startTestServer({ env: { PROCTOR_GITLAB_API_URL: gitlab.url } });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'local');
  api = client(server.url, project.key);
  const destination = await api.post('/api/notification-destinations', { type: 'gitlab', project: 'acme/web/shop', token: 'glpat-test' });
  expect(destination.status, JSON.stringify(destination.body)).toBe(201);
  gitlab.openMergeRequest('feature-y', 12, 'main');
  suite = await runVisualSuite(server.url, project.key, { CI_PIPELINE_ID: '4343', CI_COMMIT_SHA: COMMIT, CI_COMMIT_BRANCH: 'feature-y' });
  const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
  runId = listed.id;
  await waitForRun(api, runId);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if ((await changesOf()).visual_changes.filter((c) => c.comparison.status === 'done').length >= 2) break;
  }
}, 170_000);

afterAll(async () => {
  await server?.close();
  await gitlab?.close();
  if (suite) fs.rmSync(suite.dir, { recursive: true, force: true });
});

describe('proctor/visual on GitLab', () => {
  it('when changes await review, then the commit gets proctor/visual pending on its branch, and the merge request note says so with the review link', async () => {
    expect(suite.exitCode, suite.output).toBe(1);
    // Each change is recognised as its attempt is stored: the status may say "1" first, then "2".
    expect((await statusesUntil('pending', '2 visual changes to review')).at(-1)).toEqual([COMMIT, 'pending', '2 visual changes to review', 'feature-y']);
    const review = `${server.url}/projects/${projectId}/runs/${runId}/visual`;
    expect(await noteLineUntil(/2 awaiting/)).toBe(`**Visual changes:** 2 changes: 2 awaiting review, 0 approved, 0 rejected ([review](${review})).`);
    expect(gitlab.notes.filter((n) => n.iid === 12)).toHaveLength(1);
  });

  it('when one is rejected, then the status is failed, saying how many of how many', async () => {
    const { visual_changes: changes } = await changesOf();
    const card = changes.find((c) => c.title === 'card') as Change;
    expect((await api.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'rejected', ids: [card.id] })).status).toBe(200);
    expect((await statusesUntil('failed')).at(-1)).toEqual([COMMIT, 'failed', '1 of 2 visual changes rejected', 'feature-y']);
    expect(await noteLineUntil(/1 rejected/)).toMatch(/^\*\*Visual changes:\*\* 2 changes: 1 awaiting review, 0 approved, 1 rejected \(\[review\]/);
  });

  it('when all are approved, then the status is success, and the note says all are approved, edited in place', async () => {
    const approved = await api.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'approved' });
    expect(approved.body.data.counts).toMatchObject({ pending: 0, approved: 2, rejected: 0 });
    expect((await statusesUntil('success')).at(-1)).toEqual([COMMIT, 'success', '2 visual changes, all approved', 'feature-y']);
    expect(await noteLineUntil(/2 approved/)).toMatch(/^\*\*Visual changes:\*\* 2 changes: 0 awaiting review, 2 approved, 0 rejected; baselines /);
    expect(gitlab.notes.filter((n) => n.iid === 12)).toHaveLength(1);
    expect(visualStatuses().map((s) => s[1])).toEqual(expect.arrayContaining(['pending', 'failed', 'success']));
  });

  it("when every request Proctor made is checked against GitLab's API documentation, then each is a valid call of its operation, with the token", () => {
    expect(gitlab.requests.filter((r) => r.method === 'POST' && /\/statuses\//.test(r.path)).length).toBeGreaterThanOrEqual(4);
    expect(gitlab.requests.flatMap(problemsWithGitLabRequest)).toEqual([]);
    expect(new Set(gitlab.requests.map((r) => r.headers['private-token']))).toEqual(new Set(['glpat-test']));
    // The checker itself refuses what GitLab would.
    const status = gitlab.requests.find((r) => /\/statuses\//.test(r.path));
    expect(problemsWithGitLabRequest({ ...status!, body: { ...(status!.body as object), state: 'failure' } }).join()).toMatch(/state/);
  });
});
