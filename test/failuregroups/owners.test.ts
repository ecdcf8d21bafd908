import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { memberPages } from '../helpers/pages.ts';

// A failure group's owners (issue 58, point 2: owners shown and filterable on every list): the
// owners of its member tests, as the reporter listed them. Test 1 is @acme/pay's, test 2 both
// @acme/search's and @alice's, test 4 nobody's; group fg-a holds tests 1 and 2, fg-b test 4, fg-c
// test 2. The API, MCP and the groups page answer them and filter by one owner.

let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let key: string;

const OWNERS: Record<number, string[]> = { 1: ['@acme/pay'], 2: ['@acme/search', '@alice'], 4: [] };
const MEMBERS: [string, number][] = [
  ['fg-a', 1],
  ['fg-a', 2],
  ['fg-b', 4],
  ['fg-c', 2],
];

const listed = async (query = '') =>
  ((await api.get(`/api/failure-groups${query}`)).body.data.failure_groups as { id: string; owners: string[] }[])
    .map((g) => [g.id, g.owners] as const)
    .sort(([a], [b]) => a.localeCompare(b));

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  key = project.key;
  api = client(server.url, key);
  await seedEnvironment(server.sql, projectId, 'staging');
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'main', commit: 'a'.repeat(40) })).body.data.test_run.id as number;
  const tests = [1, 2, 4];
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, {
    tests: tests.map((n) => listedTest(testId(n), { title: `test ${n}`, owners: OWNERS[n] })),
  });
  const results = tests.map((n) => attempt(testId(n), { final: 'unexpected', status: 'failed', error_message: `Error: test ${n} broke` }));
  expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results })).status).toBe(200);
  for (const [group, n] of MEMBERS)
    expect((await api.post(`/api/failure-groups/${group}/members`, { test_run_id: runId, test_case_id: testId(n) })).status).toBe(200);
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
});
afterAll(async () => server?.close());

describe("a failure group's owners", () => {
  it('when the groups are listed, then each carries the owners of its tests, once each, sorted; a group of an unowned test has none', async () => {
    expect(await listed()).toEqual([
      ['fg-a', ['@acme/pay', '@acme/search', '@alice']],
      ['fg-b', []],
      ['fg-c', ['@acme/search', '@alice']],
    ]);
    expect((await api.get('/api/failure-groups/fg-c')).body.data.failure_group.owners).toEqual(['@acme/search', '@alice']);
  });

  it('when they are listed by owner, then only the groups with a test of that owner come, and the total counts them', async () => {
    expect((await listed('?owner=%40alice')).map(([id]) => id)).toEqual(['fg-a', 'fg-c']);
    expect((await listed('?owner=%40acme%2Fpay')).map(([id]) => id)).toEqual(['fg-a']);
    expect(await listed('?owner=%40nobody')).toEqual([]);
    const page = await api.get('/api/failure-groups?owner=%40alice&per_page=1');
    expect(page.body.data.failure_groups).toHaveLength(1);
    expect(page.body.pagination).toMatchObject({ total: 2 });
  });

  it("when a test is detached from a group, then its owners leave the group's, and the group leaves their list", async () => {
    expect((await api.delete(`/api/failure-groups/fg-a/members/${testId(1)}`)).status).toBe(200);
    expect((await api.get('/api/failure-groups/fg-a')).body.data.failure_group.owners).toEqual(['@acme/search', '@alice']);
    expect(await listed('?owner=%40acme%2Fpay')).toEqual([]);
  });

  it("when an assistant asks MCP for one owner's failure groups, then the answer holds theirs alone, with owners", async () => {
    const mcp = new Client({ name: 'proctor-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = (await mcp.callTool({ name: 'list_failure_groups', arguments: { owner: '@alice' } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(result.isError, result.content[0]?.text).toBeFalsy();
      const answer = JSON.parse(result.content[0]?.text ?? '') as { failure_groups: { id: string; owners: string[] }[]; total: number };
      expect(answer.failure_groups.map((g) => [g.id, g.owners]).sort()).toEqual([
        ['fg-a', ['@acme/search', '@alice']],
        ['fg-c', ['@acme/search', '@alice']],
      ]);
      expect(answer.total).toBe(2);
      const one = (await mcp.callTool({ name: 'get_failure_group', arguments: { failure_group_id: 'fg-c' } })) as { content: { text: string }[] };
      expect(JSON.parse(one.content[0]?.text ?? '').failure_group.owners).toEqual(['@acme/search', '@alice']);
    } finally {
      await mcp.close();
    }
  });

  it("when a member opens the groups page by owner, then it lists that owner's groups alone, each group's owners a link to their filter", async () => {
    const page = await memberPages(server, projectId);
    const groups = (html: string) => [...html.matchAll(/data-group="([^"]+)"/g)].map((m) => m[1]).sort();
    const all = await page('/failure-groups');
    expect(groups(all)).toEqual(['fg-a', 'fg-b', 'fg-c']);
    expect(all).toContain(`<a class="owner" href="/projects/${projectId}/failure-groups?owner=%40alice">@alice</a>`);
    const alice = await page('/failure-groups?owner=%40alice');
    expect(groups(alice)).toEqual(['fg-a', 'fg-c']);
    expect(alice).toContain('Groups with a test owned by <strong>@alice</strong>');
    // The status tabs keep the owner.
    expect(alice).toContain('href="?status=open&amp;owner=%40alice"');
    expect(groups(await page('/failure-groups?owner=%40nobody'))).toEqual([]);
    expect(await page('/failure-groups/fg-c')).toContain(
      `<a class="owner" href="/projects/${projectId}/failure-groups?owner=%40acme%2Fsearch">@acme/search</a>`,
    );
  });
});
