import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { type GitHubStandIn, startGitHub } from '../helpers/github.ts';
import { type GitLabStandIn, startGitLab } from '../helpers/gitlab.ts';
import { RunsClient } from '../../reporter/src/runs/client.ts';
import { jobSummary } from '../../reporter/src/runs/summary.ts';
import { client } from '../helpers/http.ts';
import { LIVE_REFERENCE, type Rendered, render } from '../helpers/markdown.ts';
import { runNumber, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Every Markdown Proctor writes from what a run's reporter, its tests and the repositories said:
// a run's summary.md, the MCP resource proctor://runs/{id}, the pull request comment on GitHub and
// the merge request note on GitLab, and the GitHub Action's job summary. Each field holds a newline that would end a code span or a
// paragraph, raw HTML, mentions (GitLab's @all too), cross-references, links, images and bare URLs;
// rendered by a real CommonMark/GFM renderer, none of it becomes an element, a link or a mention.

const HOSTILE = {
  environment: 'Staging\n\n# Owned <img src=x onerror=alert(1)> @all _em_',
  branch: 'feat\n\n<img src=x onerror=alert(1)>`x` @all #1',
  base: '<b>main</b>\n\n- @all ``',
  commit: 'c0ffee`\n\n<script>alert(1)</script>@all',
  title:
    'pays @octocat @all #1 !2 &3 GH-4 <script>alert(1)</script> [x](https://evil.example) ![i](https://evil.example/i.png) https://evil.example www.evil.example ~~del~~\n\n# heading',
  file: 'tests/<b>x</b>.spec.ts\n- item @all',
  project: '<i>chromium</i> @acme/team',
  error: 'Error: ```\n</code></pre><img src=x onerror=alert(1)>\n@all #3 https://evil.example\n````',
  group: 'group @all #4 !5 <img src=x onerror=alert(1)> [l](https://evil.example) `tick',
  /** A branch no pull or merge request is open for: its runs post no comment. */
  jobBranch: 'job\n\n<img src=x onerror=alert(1)>``x`` @all #1 <b>b</b>',
};

const oneLine = (value: string) => value.replace(/\r\n|[\r\n]/g, ' ');

let server: TestServer;
let api: ReturnType<typeof client>;
let key: string;
let github: GitHubStandIn;
let gitlab: GitLabStandIn;

/** A run of `branch` at `commit` whose one test fails with the hostile error, in failure group `fg-hostile`. */
async function reportRun(branch: string, commit: string, shardErrors: string[] = []): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch, commit })).body.data.test_run.id as number;
  const test = listedTest(testId(1), { title: HOSTILE.title, file_path: HOSTILE.file, runner_project: HOSTILE.project });
  expect((await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [test] })).status).toBe(200);
  const results = [
    attempt(testId(1), { final: null, status: 'failed', error_message: HOSTILE.error }),
    attempt(testId(1), { retry: 1, final: 'unexpected', status: 'failed', error_message: HOSTILE.error, failureGroupId: 'fg-hostile' }),
  ];
  expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results })).status).toBe(200);
  await api.post('/api/failure-groups/fg-hostile/members', { test_run_id: runId, test_case_id: testId(1) });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed', errors: shardErrors });
  return runId;
}

async function settled(runId: number): Promise<void> {
  await waitUntil(
    async () => {
      const { deliveries } = (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data as { deliveries: { state: string }[] };
      return deliveries.length === 2 && deliveries.every((d) => d.state === 'delivered');
    },
    20_000,
    `the deliveries of run ${runId}`,
  );
}

/** What comes out of user data: only the elements the document's own layout makes, its one link to the run. */
function expectHarmless(out: Rendered, layout: string[], counted: Record<string, number>, link: string | RegExp): void {
  expect(out.tags.filter((tag) => !layout.includes(tag))).toEqual([]);
  for (const [tag, count] of Object.entries(counted))
    expect(
      out.tags.filter((t) => t === tag),
      tag,
    ).toHaveLength(count);
  expect(out.links).toHaveLength(1);
  expect(out.links[0]?.href.startsWith(`${server.url}/`)).toBe(true);
  expect(out.links[0]?.text).toMatch(link);
  expect(out.prose).not.toMatch(LIVE_REFERENCE);
  expect(out.html).not.toMatch(/<(img|script|b|i|em|del)\b/);
}

beforeAll(async () => {
  [github, gitlab] = await Promise.all([startGitHub(), startGitLab()]);
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: github.url, PROCTOR_GITLAB_API_URL: gitlab.url } });
  const seeded = await seedProject(server.sql);
  key = seeded.key;
  const environmentId = await seedEnvironment(server.sql, seeded.projectId, 'staging');
  api = client(server.url, key);
  expect((await api.patch(`/api/environments/${environmentId}`, { name: HOSTILE.environment })).status).toBe(200);
  expect((await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' })).status).toBe(201);
  expect((await api.post('/api/notification-destinations', { type: 'gitlab', project: 'acme/shop', token: 'glpat-test' })).status).toBe(201);
  github.openPull(HOSTILE.branch, 7, HOSTILE.base);
  gitlab.openMergeRequest(HOSTILE.branch, 3, HOSTILE.base);
});

afterAll(async () => {
  await server?.close();
  await Promise.all([github?.close(), gitlab?.close()]);
});

describe('hostile text in Markdown', () => {
  let runId: number;
  let shownNumber: number;

  beforeAll(async () => {
    await settled(await reportRun(HOSTILE.branch, 'a'.repeat(40)));
    expect((await api.patch('/api/failure-groups/fg-hostile', { title: HOSTILE.group })).status).toBe(200);
    runId = await reportRun(HOSTILE.branch, 'b'.repeat(40));
    await settled(runId);
    shownNumber = await runNumber(server.sql, runId);
  });

  it("when a run's summary.md and its MCP resource quote hostile titles, branches, errors and failure groups, then no element, link or mention comes out and code stays closed", async () => {
    const overHttp = await fetch(`${server.url}/api/test-runs/${runId}/summary.md`, { headers: { authorization: `Bearer ${key}` } });
    expect(overHttp.status).toBe(200);
    const markdown = await overHttp.text();
    const mcp = new Client({ name: 'proctor-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    const resource = await mcp.readResource({ uri: `proctor://runs/${runId}` });
    await mcp.close();
    expect((resource.contents[0] as { text: string }).text).toBe(markdown);

    const out = render(markdown);
    expectHarmless(out, ['h1', 'h2', 'h3', 'p', 'strong', 'code', 'pre', 'a'], { h1: 1, h2: 1, h3: 1, pre: 1, a: 1 }, "The run's page");
    expect(out.code).toContain(oneLine(HOSTILE.branch));
    expect(out.code.some((code) => code.includes('</code></pre><img src=x onerror=alert(1)>') && code.includes('````'))).toBe(true);
    const prose = out.prose.replace(/\u200B/g, '');
    for (const text of [HOSTILE.title, HOSTILE.file, HOSTILE.project, HOSTILE.group]) expect(prose).toContain(oneLine(text));
  });

  it('when the pull request comment and the merge request note quote them, then no element, link or mention comes out and code stays closed', () => {
    expect(github.comments).toHaveLength(1);
    expect(gitlab.notes).toHaveLength(1);
    for (const body of [github.comments[0]?.body as string, gitlab.notes[0]?.body as string]) {
      const out = render(body);
      expectHarmless(out, ['!--', 'h2', 'h3', 'p', 'strong', 'code', 'ul', 'li', 'a', 'sub'], { '!--': 1, h2: 1, h3: 1, li: 1, a: 1 }, `Run #${shownNumber}`);
      expect(out.code).toEqual([oneLine(HOSTILE.base)]);
      const prose = out.prose.replace(/\u200B/g, '');
      for (const text of [HOSTILE.title, HOSTILE.file, HOSTILE.project, HOSTILE.group, HOSTILE.environment]) expect(prose).toContain(oneLine(text));
    }
  });

  it('when a commit holds a newline, backticks and HTML, then summary.md quotes it in a closed code span', async () => {
    const other = await reportRun('other', HOSTILE.commit);
    const markdown = await (await fetch(`${server.url}/api/test-runs/${other}/summary.md`, { headers: { authorization: `Bearer ${key}` } })).text();
    const out = render(markdown);
    expectHarmless(out, ['h1', 'h2', 'h3', 'p', 'strong', 'code', 'pre', 'a'], { h1: 1, h2: 1, h3: 1, pre: 1, a: 1 }, "The run's page");
    expect(out.code).toContain(oneLine(HOSTILE.commit.slice(0, 12)));
  });

  it("when the GitHub Action's job summary quotes hostile titles, branches, errors and failure groups, then no element, link or mention comes out and code stays closed", async () => {
    const jobRun = await reportRun(HOSTILE.jobBranch, 'c'.repeat(40), [HOSTILE.error]);
    const view = await new RunsClient({ url: server.url, apiKey: key, projectId: null }).read(jobRun);
    expect(view.testRun.error_reason).toContain(HOSTILE.error);
    for (const note of [null, 'Timed out after 5 min: the run was cancelled.']) {
      const out = render(jobSummary(view, note));
      const layout = ['h2', 'h3', 'p', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'br', 'pre', 'code', 'a'];
      expectHarmless(out, layout, { h2: 1, h3: 1, pre: 1, br: 1, a: 1 }, "Open the run's page");
      expect(out.code).toContain(oneLine(HOSTILE.jobBranch));
      expect(out.code.some((code) => code.includes('</code></pre><img src=x onerror=alert(1)>') && code.includes('````'))).toBe(true);
      const prose = out.prose.replace(/\u200B/g, '');
      for (const text of [HOSTILE.title, HOSTILE.file, HOSTILE.project, HOSTILE.group, HOSTILE.environment]) expect(prose).toContain(oneLine(text));
      expect(prose).toContain('Error: ```');
    }
  });
});
