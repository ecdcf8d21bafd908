// An agent's token lives as long as its run: from the run's end on, every request with it is refused
// (401, as for any key that no longer works), so nothing it writes can come after the end. And the
// keys bound to a run cannot mint agents' tokens by joining it: only the executor's own key may.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunKey } from '../../server/src/auth/store.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

type Api = ReturnType<typeof client>;

let server: TestServer;
let api: Api;
let projectId: number;

beforeAll(async () => {
  server = await startTestServer();
  const seeded = await seedProject(server.sql);
  projectId = seeded.projectId;
  api = client(server.url, seeded.key);
  await seedEnvironment(server.sql, projectId, 'staging');
});
afterAll(() => server?.close());

const unit = (file: string, id: string) => ({ runner_project: 'chromium', file, tests: [{ id, line: `[chromium] › ${file} › test` }] });

function declaration(testCase: string, text: string) {
  return {
    test_id: testCase,
    retry: 0,
    name: 'log',
    content_type: 'text/plain',
    sha256: createHash('sha256').update(text).digest('hex'),
    size_bytes: text.length,
  };
}

/** A run of agents joined by one agent (with the project's key), planned as one unit, leased by it. */
async function joinedRun(runKey: string, test: string) {
  const runId = (await api.post('/api/test-runs/agent-run', { environment: 'staging', run_key: runKey })).body.data.test_run.id as number;
  const joined = await api.post(`/api/test-runs/${runId}/agents`, { name: 'ci-1' });
  expect(joined.status, joined.text).toBe(201);
  const agentId = joined.body.data.agent.id as number;
  const agent = client(server.url, joined.body.data.agent_token);
  expect((await agent.put(`/api/test-runs/${runId}/units`, { agent_id: agentId, units: [unit('one.spec.ts', test)] })).status).toBe(200);
  expect((await agent.post(`/api/test-runs/${runId}/units/lease`, { agent_id: agentId })).body.data.unit.unit).toBe(1);
  return { runId, agentId, agent, agentToken: joined.body.data.agent_token as string, reporterKey: joined.body.data.reporter_key as string };
}

/** What the run holds of every kind of write an agent's token makes, in one row. */
async function written(runId: number) {
  const [row] = await server.sql`
    select (select count(*)::int from test_results where test_run_id = ${runId}) as results,
           (select count(*)::int from test_run_shards where test_run_id = ${runId}) as shards,
           (select count(*)::int from test_attachments where test_run_id = ${runId}) as attachments,
           (select count(*)::int from failure_group_events where test_run_id = ${runId}) as group_events,
           (select coalesce(sum(leases), 0)::int from test_run_units where test_run_id = ${runId}) as leases,
           (select count(*)::int from test_run_units where test_run_id = ${runId}) as units,
           (select max(last_seen_at) from test_run_agents where test_run_id = ${runId}) as last_seen`;
  return row;
}

const ENDINGS = {
  /** Its last unit's shard ended, with a failure: finished. */
  failed: (agent: Api, runId: number) => agent.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' }),
  cancelled: (_agent: Api, runId: number) => api.post(`/api/test-runs/${runId}/cancel`, { reason: 'not needed' }),
  /** The agent said its unit crashed. */
  error: (agent: Api, runId: number) => agent.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'crashed', errors: ['Playwright exited'] }),
};

describe("an agent's token and its run", () => {
  it.each(Object.keys(ENDINGS) as (keyof typeof ENDINGS)[])(
    "when an agent's run has ended (%s), then every write its token made before is refused with 401, and nothing of them is stored",
    async (ending) => {
      const first = testId(700 + Object.keys(ENDINGS).indexOf(ending));
      const late = testId(710 + Object.keys(ENDINGS).indexOf(ending));
      const { runId, agentId, agent } = await joinedRun(`tokens-${ending}`, first);
      // While the run lives, the token writes each kind: the refusals below are the end's doing.
      expect((await agent.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(first)] })).status).toBe(200);
      const results = { shard: 1, results: [attempt(first, { final: 'unexpected', failureGroupId: `fg_alive_${ending}` })] };
      expect((await agent.post(`/api/test-runs/${runId}/results`, results)).status).toBe(200);
      expect((await agent.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration(first, `alive ${ending}`)] })).status).toBe(200);
      expect((await agent.post(`/api/failure-groups/fg_attached_${ending}/members`, { test_run_id: runId, test_case_id: first })).status).toBe(200);
      expect((await agent.post(`/api/test-runs/${runId}/agents/${agentId}/heartbeat`)).status).toBe(200);

      expect((await ENDINGS[ending](agent, runId)).status).toBe(200);
      expect((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun.state).toBe(ending);
      const before = await written(runId);

      const lateBlob = declaration(late, `late ${ending}`);
      const writes: [string, 'post' | 'put' | 'get', string, unknown][] = [
        ['results', 'post', `/api/test-runs/${runId}/results`, { shard: 1, results: [attempt(late, { final: 'unexpected' })] }],
        ['a shard begun', 'post', `/api/test-runs/${runId}/shards/2/begin`, { tests: [listedTest(late)] }],
        ['a shard ended', 'post', `/api/test-runs/${runId}/shards/1/end`, { status: 'crashed', errors: ['late'] }],
        ['attachments', 'post', `/api/test-runs/${runId}/attachments`, { attachments: [lateBlob] }],
        ['failure groups', 'post', `/api/failure-groups/fg_late_${ending}/members`, { test_run_id: runId, test_case_id: first }],
        ['a plan', 'put', `/api/test-runs/${runId}/units`, { agent_id: agentId, units: [unit('late.spec.ts', late)] }],
        ['a lease', 'post', `/api/test-runs/${runId}/units/lease`, { agent_id: agentId }],
        ['a heartbeat', 'post', `/api/test-runs/${runId}/agents/${agentId}/heartbeat`, {}],
        ['a read', 'get', `/api/test-runs/${runId}`, undefined],
      ];
      for (const [what, method, path, body] of writes) {
        const refused = method === 'get' ? await agent.get(path) : await agent[method](path, body);
        expect(refused.status, `${what}: ${refused.text}`).toBe(401);
        expect(refused.body, what).toEqual({
          data: null,
          error: { message: `agent ${agentId}'s token ended with its run ${runId} (${ending})`, code: 'run_ended', run_state: ending },
        });
      }
      expect(await written(runId)).toEqual(before);
      expect(await server.sql`select id from failure_groups where project_id = ${projectId} and id = ${`fg_late_${ending}`}`).toEqual([]);
      expect(await server.sql`select id from artifact_blobs where project_id = ${projectId} and sha256 = ${lateBlob.sha256}`).toEqual([]);
    },
  );

  it("when a run's keys or an agent's token try to join their own run as an agent, then they are refused with 403 and no agent or token is made; the executor's key of the run joins it", async () => {
    const { runId, agentToken, reporterKey } = await joinedRun('tokens-join', testId(720));
    const count = async () =>
      (
        await server.sql<{ agents: number; tokens: number }[]>`
          select (select count(*)::int from test_run_agents where test_run_id = ${runId}) as agents,
                 (select count(*)::int from api_keys where test_run_id = ${runId} and agent_id is not null) as tokens`
      )[0];
    const before = await count();
    const keys: [string, string][] = [
      ["the reporter's key the join answered", reporterKey],
      ["a run's key made for its reporter", await createRunKey(server.sql, projectId, runId)],
      ["the agent's token", agentToken],
    ];
    for (const [what, key] of keys) {
      const refused = await client(server.url, key).post(`/api/test-runs/${runId}/agents`, { name: 'minted' });
      expect(refused.status, `${what}: ${refused.text}`).toBe(403);
      expect(refused.body.data, what).toBeNull();
      expect(refused.body.error.message, what).toMatch(/^POST \/api\/test-runs\/\{id\}\/agents is not open to a run's key or an agent's token/);
    }
    expect(await count()).toEqual(before);

    // The server's executor serves a run of agents with a key of the run's made for that: it joins, on its own run only.
    const executorKey = client(server.url, await createRunKey(server.sql, projectId, runId, true));
    const other = (await api.post('/api/test-runs/agent-run', { environment: 'staging', run_key: 'tokens-join-other' })).body.data.test_run.id as number;
    expect((await executorKey.post(`/api/test-runs/${other}/agents`, { name: 'server 1' })).status).toBe(403);
    const served = await executorKey.post(`/api/test-runs/${runId}/agents`, { name: 'server 1' });
    expect(served.status, served.text).toBe(201);
    expect(await count()).toEqual({ agents: (before?.agents as number) + 1, tokens: (before?.tokens as number) + 1 });
  });
});
