import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../server/src/db.ts';
import { beginShard } from '../../server/src/runs/ingest.ts';
import { listedTest } from '../helpers/attempts.ts';
import { seedProjectWithEnvironment, seedRun, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// A shard's begin goes out in one write with its COMMIT (runs/ingest.ts). When the run refuses it,
// PostgreSQL skips what was sent behind the refusal, the COMMIT among it: the connection must
// still come back to the pool ready for the next transaction.

let server: TestServer;
let single: Sql | null = null;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await single?.end({ timeout: 5 });
  await server?.close();
});

describe('a begin in one write', () => {
  it('when begins are refused (no such run, an ended run, no such shard), then each says why and the one connection takes the next transaction', async (ctx) => {
    if (server.db.embedded) ctx.skip("on the embedded database the pool is the server's one connection, which this test would share");
    single = connect(server.db.url, 1);
    const { projectId, environmentId } = await seedProjectWithEnvironment(server.sql, 'ci');
    const ended = await seedRun(server.sql, projectId, environmentId);
    const body = { tests: [listedTest(testId(1))], commit: null, complete: false };
    await expect(beginShard(single, projectId, 999_999, 1, body, server.clock.now)).rejects.toThrow('test run not found');
    await expect(beginShard(single, projectId, ended, 1, body, server.clock.now)).rejects.toThrow(`test run ${ended} is already passed`);
    const [open] = await single<{ id: number }[]>`
      insert into test_runs (project_id, environment_id, state, origin, total_shards) values (${projectId}, ${environmentId}, 'running', 'reporter', 2)
      returning id`;
    const runId = (open as { id: number }).id;
    await expect(beginShard(single, projectId, runId, 3, body, server.clock.now)).rejects.toThrow('path.shard: this run has 2 shard(s)');
    const [state] = await single<{ status: string }[]>`select 'ready' as status`;
    expect(state?.status).toBe('ready');
    expect(await beginShard(single, projectId, runId, 2, body, server.clock.now)).toBeGreaterThan(0);
    const [listed] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_run_tests where test_run_id = ${runId}`;
    expect(listed?.n).toBe(1);
    const [refused] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_run_tests where test_run_id = ${ended}`;
    expect(refused?.n).toBe(0);
  });
});
