import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';
import { reportedDifferentPixels, runVisualSuite, type VisualSuite } from '../helpers/visual.ts';

let server: TestServer;
let suite: VisualSuite;
let runId: number;
let projectId: number;
let admin: ReturnType<typeof client>;
let github: GitHubStandIn;
const COMMIT = 'c'.repeat(40);

interface Change {
  id: number;
  snapshot_name: string;
  title: string;
  expected_url: string;
  actual_url: string;
  diff_url: string | null;
  comparison: {
    status: string;
    width: number;
    height: number;
    changed_pixels: number;
    changed_ratio: number;
    boxes: { x: number; y: number; width: number; height: number }[];
  };
  review: string;
  reviewed_by: string | null;
  reviewed_at: string | null;
}

async function changesOf(api: ReturnType<typeof client>, run: number): Promise<{ visual_changes: Change[]; counts: Record<string, number> }> {
  const response = await api.get(`/api/test-runs/${run}/visual-changes`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

const visualStatuses = () => github.statuses.filter((s) => s.context === 'proctor/visual').map((s) => [s.sha, s.state, s.description]);

/** The pull request's comment, once its line on visual changes matches `line` (or 20 s passed): that line. */
async function commentLineUntil(line: RegExp): Promise<string | undefined> {
  const read = () =>
    github.comments
      .find((c) => c.issue === 9)
      ?.body.split('\n')
      .find((l) => l.startsWith('**Visual changes:**'));
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && !line.test(read() ?? '');) await new Promise((resolve) => setTimeout(resolve, 100));
  return read();
}

/** The `proctor/visual` statuses sent, once the last one is `state` (or 20 s passed). */
async function statusesUntil(state: string): Promise<string[][]> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (visualStatuses().at(-1)?.[1] === state) break;
  }
  return visualStatuses();
}

beforeAll(async () => {
  github = await startGitHub();
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url } });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'local');
  admin = client(server.url, project.key);
  const destination = await admin.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' });
  expect(destination.status, JSON.stringify(destination.body)).toBe(201);
  github.openPull('feature-x', 9);
  // A GitLab pipeline's variables: the reporter reports the run's branch and commit from them.
  suite = await runVisualSuite(server.url, project.key, { CI_PIPELINE_ID: '4242', CI_COMMIT_SHA: COMMIT, CI_COMMIT_BRANCH: 'feature-x' });
  const [listed] = (await admin.get('/api/test-runs?environment=local')).body.data.test_runs;
  runId = listed.id;
  await waitForRun(admin, runId);
  // The comparison is a job: wait until it has compared both.
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if ((await changesOf(admin, runId)).visual_changes.filter((c) => c.comparison.status === 'done').length >= 2) break;
  }
}, 170_000);

afterAll(async () => {
  await server?.close();
  await github?.close();
  if (suite) fs.rmSync(suite.dir, { recursive: true, force: true });
});

describe('visual changes of a real Playwright suite', () => {
  it('when two screenshot tests see a changed page, then the run has two visual changes, and the ordinary failure and the steady screenshot are none', async () => {
    expect(suite.exitCode, suite.output).toBe(1);
    const { visual_changes: changes, counts } = await changesOf(admin, runId);
    expect(changes.map((c) => [c.title, c.snapshot_name]).sort()).toEqual([
      ['banner', 'banner'],
      ['card', 'card-1'],
    ]);
    expect(counts).toEqual({ total: 2, pending: 2, approved: 0, rejected: 0, flaky: 0, noise: 0 });
  });

  it('when changes are found, then the commit gets the status proctor/visual pending, saying how many await review', async () => {
    const statuses = await statusesUntil('pending');
    expect(statuses.at(-1)).toEqual([COMMIT, 'pending', expect.stringMatching(/^[12] visual changes? to review$/)]);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  });

  it("when changes are found, then the pull request's comment says how many await review and links the review page", async () => {
    const review = `${server.url}/projects/${projectId}/runs/${runId}/visual`;
    expect(await commentLineUntil(/2 awaiting/)).toBe(`**Visual changes:** 2 changes: 2 awaiting review, 0 approved, 0 rejected ([review](${review})).`);
    // One comment, the run's section holding the line.
    expect(github.comments.filter((c) => c.issue === 9)).toHaveLength(1);
    expect(github.comments[0]?.body).toMatch(/### local: failed\n\[Run #\d+\]/);
  });

  it('when a change is compared, then its changed pixels are what Playwright counted, its share of 200×100, and its box the changed rectangle', async () => {
    const { visual_changes: changes } = await changesOf(admin, runId);
    const banner = changes.find((c) => c.title === 'banner') as Change;
    const card = changes.find((c) => c.title === 'card') as Change;
    expect(reportedDifferentPixels(suite.report, 'banner')).toBe(800);
    expect(banner.comparison).toMatchObject({ width: 200, height: 100, changed_pixels: 800, changed_ratio: 0.04 });
    expect(banner.comparison.boxes).toEqual([{ x: 10, y: 10, width: 40, height: 20 }]);
    expect(card.comparison.changed_pixels).toBe(reportedDifferentPixels(suite.report, 'card'));
    expect(card.comparison).toMatchObject({ changed_pixels: 300, changed_ratio: 0.015 });
    expect(card.comparison.boxes).toEqual([{ x: 120, y: 50, width: 30, height: 10 }]);
  });

  it('when the images are downloaded, then the baseline, new and diff images are the PNGs Playwright wrote', async () => {
    const { visual_changes: changes } = await changesOf(admin, runId);
    for (const change of changes) {
      for (const url of [change.expected_url, change.actual_url, change.diff_url as string]) {
        const response = await fetch(url);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('image/png');
      }
    }
  });
});

describe('reviewing visual changes', () => {
  it('when a viewer reviews, then it is refused with 403 and nothing changes', async () => {
    const viewer = await seedUser(server.sql, [projectId], { role: 'viewer' });
    const response = await client(server.url, viewer.key).post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'approved' });
    expect(response.status).toBe(403);
    expect((await changesOf(admin, runId)).counts.pending).toBe(2);
  });

  it('when a member approves one and rejects the other, then each is kept with who and when, and audited', async () => {
    const member = await seedUser(server.sql, [projectId], { role: 'member' });
    const api = client(server.url, member.key);
    const { visual_changes: changes } = await changesOf(api, runId);
    const banner = changes.find((c) => c.title === 'banner') as Change;
    const card = changes.find((c) => c.title === 'card') as Change;
    const approved = await api.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'approved', ids: [banner.id] });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.data.counts).toEqual({ total: 2, pending: 1, approved: 1, rejected: 0, flaky: 0, noise: 0 });
    const rejected = await api.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'rejected', ids: [card.id] });
    const after = rejected.body.data.visual_changes as Change[];
    const [name] = await server.sql<{ name: string }[]>`select name from users where id = ${member.userId}`;
    expect(after.find((c) => c.id === banner.id)).toMatchObject({ review: 'approved', reviewed_by: name?.name });
    expect(after.find((c) => c.id === card.id)).toMatchObject({ review: 'rejected', reviewed_by: name?.name });
    expect(Number.isNaN(Date.parse(after[0]?.reviewed_at as string))).toBe(false);
    const events = await server.sql<{ action: string; target: string; actor_id: string }[]>`
      select action, target, actor_id from audit_events where project_id = ${projectId} and action like 'visual_change.%' order by id`;
    expect((await statusesUntil('failure')).at(-1)).toEqual([COMMIT, 'failure', '1 of 2 visual changes rejected']);
    expect(await commentLineUntil(/1 rejected/)).toMatch(/^\*\*Visual changes:\*\* 2 changes: 0 awaiting review, 1 approved, 1 rejected[ ;]/);
    expect(events).toEqual([
      { action: 'visual_change.approved', target: `visual_change:${banner.id}`, actor_id: member.userId },
      { action: 'visual_change.rejected', target: `visual_change:${card.id}`, actor_id: member.userId },
    ]);
  });

  it('when all are approved at once, then both are approved and only the one that changed is audited again', async () => {
    const response = await admin.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'approved' });
    expect(response.body.data.counts).toEqual({ total: 2, pending: 0, approved: 2, rejected: 0, flaky: 0, noise: 0 });
    expect((await statusesUntil('success')).at(-1)).toEqual([COMMIT, 'success', '2 visual changes, all approved']);
    // Nowhere to commit the baselines (the GitHub branch is not there): the comment says the approvals and that.
    expect(await commentLineUntil(/2 approved, 0 rejected;/)).toMatch(
      /^\*\*Visual changes:\*\* 2 changes: 0 awaiting review, 2 approved, 0 rejected; baselines /,
    );
    expect(github.comments.filter((c) => c.issue === 9)).toHaveLength(1);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from audit_events where action like 'visual_change.%'`;
    expect(row?.n).toBe(3);
  });

  it('when an id is not one of the run, then the answer is 404 and nothing changes', async () => {
    const response = await admin.post(`/api/test-runs/${runId}/visual-changes/review`, { review: 'rejected', ids: [999999] });
    expect(response.status).toBe(404);
    expect((await changesOf(admin, runId)).counts.approved).toBe(2);
  });
});
