import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { createKey } from '../../server/src/auth/store.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Proctor as an MCP server, asked by the SDK's own Client over Streamable HTTP, on a project filled
// through the API: a run with failures (one new, one still failing, in a failure group), a flaky test.
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let adminKey: string;
let firstRun: number;
let lastRun: number;
const [steady, broken, breaking, flaky] = [1, 2, 3, 4].map((n) => testId(n)) as [string, string, string, string];
const TITLES: Record<string, string> = {
  [steady]: 'lists the prices',
  [broken]: 'exports the invoice',
  [breaking]: 'applies a coupon',
  [flaky]: 'pays by card',
};
const open: Client[] = [];

async function reportRun(outcomes: Record<string, FinalOutcome>, groups: Record<string, string> = {}): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'ci', branch: 'main', commit: 'c'.repeat(40) })).body.data.test_run.id as number;
  const ids = Object.keys(outcomes);
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id, { title: TITLES[id] })), complete: true });
  const results = ids.flatMap((id) => {
    const attempts = attemptsOf(
      id,
      outcomes[id] as FinalOutcome,
      `Error: expect(locator).toHaveText(expected) failed\n\nLocator: locator('#${id.slice(19, 20)}')`,
    );
    const last = attempts.at(-1)?.final as { failure_group_id: string | null; stack_frames?: string[] } | null;
    if (last && groups[id]) last.failure_group_id = groups[id] as string;
    if (last && outcomes[id] === 'unexpected') last.stack_frames = ['tests/shop.spec.ts:12:5', 'tests/helpers/cart.ts:30:11'];
    return attempts.map((attempt) => ({ ...attempt, error_location: attempt.status === 'failed' ? 'tests/shop.spec.ts:12:5' : null }));
  });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
  for (const [id, group] of Object.entries(groups)) await api.post(`/api/failure-groups/${group}/members`, { test_run_id: runId, test_case_id: id });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: Object.values(outcomes).includes('unexpected') ? 'failed' : 'passed' });
  return runId;
}

async function connect(key: string): Promise<Client> {
  const mcp = new Client({ name: 'proctor-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  open.push(mcp);
  return mcp;
}

/** A tool's answer: its JSON, or its error's text. */
async function call(mcp: Client, name: string, args: Record<string, unknown> = {}): Promise<{ error: string | null; data: Record<string, any> }> {
  const result = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  const text = result.content[0]?.text ?? '';
  return result.isError ? { error: text, data: {} } : { error: null, data: JSON.parse(text) };
}

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql, 'Shop');
  projectId = project.projectId;
  adminKey = project.key;
  api = client(server.url, adminKey);
  await api.post('/api/environments', { name: 'CI', slug: 'ci' });
  firstRun = await reportRun({ [steady]: 'expected', [broken]: 'unexpected', [breaking]: 'expected', [flaky]: 'flaky' }, { [broken]: 'fg_invoice' });
  lastRun = await reportRun(
    { [steady]: 'expected', [broken]: 'unexpected', [breaking]: 'unexpected', [flaky]: 'expected' },
    { [broken]: 'fg_invoice', [breaking]: 'fg_coupon' },
  );
}, 60_000);

afterAll(async () => {
  for (const mcp of open) await mcp.close();
  await server?.close();
});

describe('the MCP server', () => {
  it('when an assistant lists the tools, then each is there with an input schema from the API', async () => {
    const mcp = await connect(adminKey);
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'compare_runs',
        'get_digest',
        'get_failure_group',
        'get_run',
        'get_test',
        'list_failure_groups',
        'list_flaky_tests',
        'list_runs',
        'rerun_failed',
        'search_tests',
        'set_failure_group_status',
        'snooze_test',
      ].sort(),
    );
    const getRun = tools.find((tool) => tool.name === 'get_run');
    expect(getRun?.inputSchema).toMatchObject({ type: 'object', properties: { run_id: { type: 'integer', minimum: 1 } }, required: ['run_id'] });
    const getTest = tools.find((tool) => tool.name === 'get_test');
    expect(getTest?.inputSchema.properties?.test_case_id).toMatchObject({ type: 'string', pattern: '^[0-9a-f]{20}-[0-9a-f]{20}$' });
    expect(tools.find((tool) => tool.name === 'list_runs')?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('when a run is read, then its failures come with their title, error, place, failure group and whether they are new', async () => {
    const mcp = await connect(adminKey);
    const { data } = await call(mcp, 'get_run', { run_id: lastRun });
    expect(data.run).toMatchObject({ id: lastRun, state: 'failed', environment: 'ci', branch: 'main', counts: { total: 4, failed: 2 } });
    expect(data.run.url).toBe(`${server.url}/projects/${projectId}/runs/${lastRun}`);
    expect(data.previous_run_id).toBe(firstRun);
    const byTitle = Object.fromEntries(data.failures.map((failure: { title: string }) => [failure.title, failure]));
    expect(byTitle['applies a coupon']).toMatchObject({
      status: 'failed',
      category: 'assertion',
      since_previous_run: 'new',
      location: 'tests/shop.spec.ts:12:5',
      stack: ['tests/shop.spec.ts:12:5', 'tests/helpers/cart.ts:30:11'],
      failure_group: { id: 'fg_coupon', title: "expect(locator('#3')).toHaveText at shop.spec.ts:12" },
      runner_project: 'p',
    });
    expect(byTitle['applies a coupon'].error).toContain('toHaveText');
    expect(byTitle['exports the invoice']).toMatchObject({ since_previous_run: 'still failing' });
    expect(data.failures_total).toBe(2);

    const runs = (await call(mcp, 'list_runs', { state: 'failed' })).data;
    expect(runs.runs.map((run: { id: number }) => run.id)).toEqual([lastRun, firstRun]);
    expect((await call(mcp, 'list_runs', { since: new Date(Date.now() + 60_000).toISOString() })).data.runs).toEqual([]);
  });

  it('when a test, a search, flaky tests, failure groups and a comparison are asked for, then each answers from the project', async () => {
    const mcp = await connect(adminKey);
    const test = (await call(mcp, 'get_test', { test_case_id: breaking })).data;
    expect(test.test).toMatchObject({ title: 'applies a coupon', file: 'a.spec.ts' });
    expect(test.per_environment_and_branch).toEqual([
      expect.objectContaining({
        environment: 'CI',
        branch: 'main',
        first_failure: expect.objectContaining({ run_id: lastRun }),
        last_pass: expect.objectContaining({ run_id: firstRun }),
        failed_runs_since: 1,
      }),
    ]);
    expect(test.failure_groups).toEqual([expect.objectContaining({ id: 'fg_coupon', failed_runs: 1 })]);

    expect((await call(mcp, 'search_tests', { query: 'invoice' })).data.tests.map((t: { id: string }) => t.id)).toEqual([broken]);
    const flakyTests = (await call(mcp, 'list_flaky_tests', {})).data;
    expect(flakyTests.tests.find((t: { test_case_id: string }) => t.test_case_id === flaky)).toMatchObject({ flaky_runs: 1, runs_counted: 2 });

    const groups = (await call(mcp, 'list_failure_groups', { status: 'open' })).data;
    expect(groups.failure_groups.map((g: { id: string }) => g.id).sort()).toEqual(['fg_coupon', 'fg_invoice']);
    const group = (await call(mcp, 'get_failure_group', { failure_group_id: 'fg_invoice' })).data;
    expect(group).toMatchObject({ failure_group: { id: 'fg_invoice', status: 'open' }, tests: [{ test_case_id: broken, sightings: 2 }], tests_total: 1 });

    const compared = (await call(mcp, 'compare_runs', { run_id: lastRun })).data;
    expect(compared.base.id).toBe(firstRun);
    expect(compared.new_failures.tests.map((t: { test_case_id: string }) => t.test_case_id)).toEqual([breaking]);
    expect(compared.still_failing.tests.map((t: { test_case_id: string }) => t.test_case_id)).toEqual([broken]);
  });

  it('when a run is read as a resource or over HTTP as Markdown, and the triage prompt is asked for, then each says what the run holds', async () => {
    const mcp = await connect(adminKey);
    const resource = await mcp.readResource({ uri: `proctor://runs/${lastRun}` });
    const markdown = (resource.contents[0] as { text: string }).text;
    expect(markdown).toContain(`# Run \\#\u200B${lastRun}: failed`);
    expect(markdown).toContain('### applies a coupon (failed, assertion, new)');
    expect(markdown).toContain("Stack, in the suite's files: tests/shop.spec.ts:12:5, tests/helpers/cart.ts:30:11");
    // `#3` is quoted as `\#` and a zero-width space: pasted into an issue, it is no reference to issue 3.
    expect(markdown).toContain("Failure group: expect(locator('\\#\u200B3')).toHaveText at shop.spec.ts:12");
    const overHttp = await fetch(`${server.url}/api/test-runs/${lastRun}/summary.md`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(overHttp.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await overHttp.text()).toBe(markdown);
    const prompt = await mcp.getPrompt({ name: 'triage_run', arguments: { run_id: String(lastRun) } });
    expect((prompt.messages[0]?.content as { text: string }).text).toContain(`Call get_run with run_id ${lastRun}`);
  });

  it("when a member's key snoozes a test, sets a group's status and reruns the failures, then the API shows each change", async () => {
    const mcp = await connect(adminKey);
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const snoozed = await call(mcp, 'snooze_test', { test_case_id: broken, until, reason: 'the invoice service is down' });
    expect(snoozed.error).toBeNull();
    const [snooze] = (await api.get('/api/snoozes')).body.data.snoozes;
    expect(snooze).toMatchObject({ test_ids: [broken], description: 'the invoice service is down', source: 'user' });
    expect((await call(mcp, 'set_failure_group_status', { failure_group_id: 'fg_coupon', status: 'resolved' })).data.failure_group.status).toBe('resolved');
    expect((await api.get('/api/failure-groups/fg_coupon')).body.data.failure_group.status).toBe('resolved');
    const rerun = await call(mcp, 'rerun_failed', { run_id: lastRun });
    expect(rerun.error).toBeNull();
    const stored = await server.sql<{ rerun_source_id: number; test_case_ids: string[] }[]>`
      select rerun_source_id, test_case_ids from test_runs where id = ${rerun.data.test_run.id}`;
    expect(stored[0]).toMatchObject({ rerun_source_id: lastRun });
    expect([...(stored[0]?.test_case_ids ?? [])].sort()).toEqual([broken, breaking].sort());
    expect((await call(mcp, 'snooze_test', { test_case_id: broken, until: '2020-01-01T00:00:00Z', reason: 'x' })).error).toBe('until: must be in the future');
  });

  it("when a viewer's key calls a write tool, or another project's key reads, then it is refused or sees nothing", async () => {
    const viewer = await connect(await createKey(server.sql, { projectId }, 'read'));
    expect((await call(viewer, 'get_run', { run_id: lastRun })).error).toBeNull();
    const refused = await call(viewer, 'snooze_test', { test_case_id: steady, until: new Date(Date.now() + 86_400_000).toISOString(), reason: 'no' });
    expect(refused.error).toBe("snooze_test needs the role member; this key's role is viewer");
    expect((await call(viewer, 'rerun_failed', { run_id: lastRun })).error).toMatch(/^rerun_failed needs the role member/);

    const stranger = await connect((await seedProject(server.sql, 'Elsewhere')).key);
    expect((await call(stranger, 'get_run', { run_id: lastRun })).error).toBe(`run_id: test run ${lastRun} not found`);
    expect((await call(stranger, 'list_runs', {})).data.runs).toEqual([]);
    expect((await call(stranger, 'get_failure_group', { failure_group_id: 'fg_invoice' })).error).toMatch(/not found/);
    const bad = await stranger.callTool({ name: 'get_run', arguments: { run_id: 'one' } });
    expect(bad.isError).toBe(true);
  });

  it('when a tool is called in one POST with no session (stateless), then the answer comes back in that response', async () => {
    const answer = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_run', arguments: { run_id: lastRun } } }),
    });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { id: number; result: { content: { text: string }[] } };
    expect(body.id).toBe(7);
    expect(JSON.parse(body.result.content[0]?.text ?? '{}').run.id).toBe(lastRun);
  });

  it('when /mcp is called without a key, with a session cookie or with GET, then it is refused', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect((await fetch(`${server.url}/mcp`, { method: 'POST', headers, body })).status).toBe(401);
    expect((await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...headers, cookie: 'proctor_session=anything' }, body })).status).toBe(401);
    expect((await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${adminKey}` } })).status).toBe(405);
  });

  it('when a run holds 20,000 tests, then get_run answers one page of its failures, far within the bound', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'ci', branch: 'big' })).body.data.test_run.id as number;
    const ids = Array.from({ length: 20_000 }, (_, i) => testId(1000 + i));
    for (let from = 0; from < ids.length; from += 5000) {
      await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.slice(from, from + 5000).map((id) => listedTest(id)), complete: true });
    }
    for (let from = 0; from < ids.length; from += 2500) {
      const batch = ids
        .slice(from, from + 2500)
        .flatMap((id, i) => attemptsOf(id, (from + i) % 10 === 0 ? 'unexpected' : 'expected', `Error: ${'x'.repeat(5000)}`));
      expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: batch })).status).toBe(200);
    }
    await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' });
    const mcp = await connect(adminKey);
    const result = (await mcp.callTool({ name: 'get_run', arguments: { run_id: runId, page: 3 } })) as { content: { text: string }[] };
    const text = result.content[0]?.text ?? '';
    expect(text.length).toBeLessThan(100_000);
    const data = JSON.parse(text);
    expect(data.failures).toHaveLength(20);
    expect(data).toMatchObject({ failures_total: 2000, page: 3, pages: 100 });
    expect(data.failures[0].error.length).toBeLessThan(2100);
  }, 120_000);

  it.each([
    ["the reporter package's `proctor-ci mcp`", ['reporter/dist/cli/main.js', 'mcp']],
    ["the server package's `proctor mcp`", ['--import', 'tsx', 'server/src/bin.ts', 'mcp']],
  ])(
    'when an assistant starts %s as a process, then it lists and calls the same tools over stdio, with the key it was given',
    async (_command, args) => {
      const stdio = new StdioClientTransport({
        command: process.execPath,
        args,
        env: { ...(process.env as Record<string, string>), PROCTOR_URL: server.url, PROCTOR_API_KEY: await createKey(server.sql, { projectId }, 'read') },
        stderr: 'pipe',
      });
      const mcp = new Client({ name: 'proctor-stdio-test', version: '1.0.0' });
      await mcp.connect(stdio);
      open.push(mcp);
      expect((await mcp.listTools()).tools).toHaveLength(12);
      const { data } = await call(mcp, 'get_run', { run_id: lastRun });
      expect(data.run).toMatchObject({ id: lastRun, state: 'failed' });
      // The key it relays is a viewer's: a write is refused as over HTTP.
      expect((await call(mcp, 'rerun_failed', { run_id: lastRun })).error).toMatch(/^rerun_failed needs the role member/);
      const resource = await mcp.readResource({ uri: `proctor://runs/${lastRun}` });
      expect((resource.contents[0] as { text: string }).text).toContain(`# Run \\#\u200B${lastRun}: failed`);
    },
    60_000,
  );

  it('when `proctor mcp` is started without a URL, then it says what is missing and exits 2', async () => {
    const cli = spawnProctor(['mcp'], { PROCTOR_URL: '', PROCTOR_API_KEY: 'k' });
    expect(await cli.exited).toBe(2);
    expect(cli.output()).toContain("proctor mcp: --url (or PROCTOR_URL) must be the server's http(s) URL");
  });

  it('when the server cannot be reached, then `proctor-ci mcp` answers each request with an error instead of leaving the assistant waiting', async () => {
    const relay = spawn(process.execPath, ['reporter/dist/cli/main.js', 'mcp'], {
      env: { PATH: process.env.PATH, PROCTOR_URL: 'http://127.0.0.1:9', PROCTOR_API_KEY: 'k' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    relay.stdout.on('data', (chunk) => (stdout += chunk));
    relay.stdin.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\nnot json\n`);
    const code = await new Promise<number | null>((resolve) => relay.on('close', resolve));
    expect(code).toBe(0);
    const answers = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(answers).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Proctor at http://127.0.0.1:9 could not be reached' } },
        { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: a line on stdin is not JSON' } },
      ]),
    );
  });
});
