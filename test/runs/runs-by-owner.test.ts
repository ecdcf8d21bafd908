import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';
import { memberPages } from '../helpers/pages.ts';

// The runs list by owner: the runs with a failed or flaky test the owner owns (as a run's page
// shows its failures by owner), through the API, its live stream, the dashboard and MCP.

let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let key: string;

/** Tests 1 to 4 and their owners, listed alike by every run (a listing refreshes a test's owners). */
const OWNERS: Record<number, string[]> = { 1: ['@acme/payments'], 2: ['@acme/checkout', '@alice'], 3: ['@acme/checkout'], 4: [] };

/** A run of the four tests on `main`, each expected unless `outcomes` says otherwise. */
async function runOf(outcomes: Record<number, FinalOutcome> = {}): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'main' })).body.data.test_run.id as number;
  const tests = [1, 2, 3, 4];
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map((n) => listedTest(testId(n), { title: `test ${n}`, owners: OWNERS[n] })) });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: tests.flatMap((n) => attemptsOf(testId(n), outcomes[n] ?? 'expected')) });
  const failed = Object.values(outcomes).includes('unexpected');
  expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failed ? 'failed' : 'passed' })).status).toBe(200);
  return runId;
}

const runs = { payments: 0, checkoutFlaky: 0, passed: 0, both: 0, unowned: 0 };

const listed = async (query: string) => {
  const answer = await api.get(`/api/test-runs?${query}`);
  expect(answer.status, answer.text).toBe(200);
  return { ids: (answer.body.data.test_runs as { id: number }[]).map((run) => run.id), total: answer.body.pagination.total as number };
};

beforeAll(async () => {
  server = await startTestServer();
  ({ projectId, key } = await seedProject(server.sql));
  api = client(server.url, key);
  await seedEnvironment(server.sql, projectId, 'staging');
  runs.payments = await runOf({ 1: 'unexpected' });
  runs.checkoutFlaky = await runOf({ 3: 'flaky' });
  runs.passed = await runOf();
  runs.both = await runOf({ 1: 'unexpected', 2: 'unexpected' });
  runs.unowned = await runOf({ 4: 'unexpected' });
});

afterAll(async () => {
  await server?.close();
});

describe('the runs list by owner', () => {
  it('when runs are listed by owner, then only the runs with a failed or flaky test that owner owns come, newest first, and the total counts them', async () => {
    expect(await listed(`owner=${encodeURIComponent('@acme/checkout')}`)).toEqual({ ids: [runs.both, runs.checkoutFlaky], total: 2 });
    expect(await listed(`owner=${encodeURIComponent('@acme/payments')}`)).toEqual({ ids: [runs.both, runs.payments], total: 2 });
    expect(await listed(`owner=${encodeURIComponent('@alice')}`)).toEqual({ ids: [runs.both], total: 1 });
    expect(await listed(`owner=${encodeURIComponent('@nobody')}`)).toEqual({ ids: [], total: 0 });
    // With the other filters and pages, as without an owner.
    expect(await listed(`owner=${encodeURIComponent('@acme/payments')}&state=failed&per_page=1&page=2`)).toEqual({ ids: [runs.payments], total: 2 });
    expect(await listed(`owner=${encodeURIComponent('@acme/payments')}&branch=elsewhere`)).toEqual({ ids: [], total: 0 });
    expect((await listed('')).total).toBe(5);
  });

  it('when the owner is empty or too long, then the list is a 400 naming the field', async () => {
    for (const owner of ['', 'x'.repeat(201)]) {
      const refused = await api.get(`/api/test-runs?owner=${owner}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain('query.owner');
    }
  });

  it("when the API's description is read, then the runs list documents its owner filter", async () => {
    const description = (await api.get('/api/openapi.json')).body;
    const parameters = description.paths['/api/test-runs'].get.parameters as { name: string; in: string; description?: string }[];
    expect(parameters.find((p) => p.name === 'owner')).toMatchObject({
      in: 'query',
      description: expect.stringContaining('failed or flaky test this owner owns'),
    });
  });

  it("when a list's stream filters by owner, then a run made after the list's newest is sent once it has a failure of theirs, and a run without one never", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.url}/api/test-runs/events?after=${runs.unowned}&owner=${encodeURIComponent('@acme/payments')}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const sent: number[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          for (const match of buffer.matchAll(/event: run\ndata: (.*)\n/g)) sent.push((JSON.parse(match[1] as string) as { id: number }).id);
          buffer = buffer.slice(buffer.lastIndexOf('\n\n') + 1);
        }
      } catch {
        // Aborted below.
      }
    })();
    try {
      const checkout = await runOf({ 3: 'unexpected' });
      const payments = await runOf({ 1: 'unexpected' });
      const deadline = Date.now() + 10_000;
      while (!sent.includes(payments) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sent).toContain(payments);
      expect(sent).not.toContain(checkout);
    } finally {
      abort.abort();
      await reading;
    }
  });

  it("when a member opens the runs page by owner, then it lists that owner's runs alone with the owner in its form, its live update keeps the owner, and the run page and failure groups link to it", async () => {
    const page = await memberPages(server, projectId);
    const shownRuns = (html: string) => [...html.matchAll(/<tr data-run="(\d+)"/g)].map((match) => Number(match[1]));

    const alice = await page(`/runs?owner=${encodeURIComponent('@alice')}`);
    expect(shownRuns(alice)).toEqual([runs.both]);
    expect(alice).toContain('<input name="owner" value="@alice"');
    expect(alice).toContain(`<a href="/projects/${projectId}/runs?">every owner</a>`);
    // The live update asks the API and the stream for the same owner's runs.
    expect(alice).toMatch(/data-live-url="[^"]*owner=%40alice/);
    expect(alice).toMatch(/data-live-events="[^"]*owner=%40alice/);
    expect(shownRuns(await page('/runs?owner=%40nobody'))).toEqual([]);
    expect(shownRuns(await page('/runs')).length).toBeGreaterThanOrEqual(5);

    const run = await page(`/runs/${runs.both}?owner=${encodeURIComponent('@alice')}`);
    expect(run).toContain(`<a href="/projects/${projectId}/runs?owner=%40alice">Runs with failures owned by @alice</a>`);
    const groups = await page(`/failure-groups?owner=${encodeURIComponent('@alice')}`);
    expect(groups).toContain(`<a href="/projects/${projectId}/runs?owner=%40alice">runs with their failures</a>`);
  });

  it('when an assistant asks MCP for one owner’s runs, then list_runs answers the runs with failures of theirs alone', async () => {
    const mcp = new Client({ name: 'proctor-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = (await mcp.callTool({ name: 'list_runs', arguments: { owner: '@acme/payments', state: 'failed' } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(result.isError, result.content[0]?.text).toBeFalsy();
      const answer = JSON.parse(result.content[0]?.text ?? '') as { runs: { id: number }[]; total: number };
      // The runs made by the stream's test come first: @acme/payments's failure in the newest.
      expect(answer.runs.map((r) => r.id).slice(-2)).toEqual([runs.both, runs.payments]);
      expect(answer.total).toBe(3);
    } finally {
      await mcp.close();
    }
  });
});
