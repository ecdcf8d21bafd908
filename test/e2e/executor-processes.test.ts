import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { isAlive } from '../../server/src/embedded.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { git } from '../helpers/recording-suite.ts';
import { freePort, httpWorkersOf, type ServerProcess, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { createTestRepository, type TestRepository } from '../helpers/repo.ts';
import { runProcesses, trigger, waitForRun, waitUntil } from '../helpers/runs.ts';

let db: TestDatabase;
let repo: TestRepository;
let dataRoot: string;
let key: string;
const servers: ServerProcess[] = [];

/** A Proctor server process of its own on the test's database, executing runs. */
async function serve(extra: Record<string, string> = {}): Promise<{ url: string; process: ServerProcess }> {
  const port = await freePort();
  const process = spawnProctor(['serve'], {
    DATABASE_URL: db.url,
    PORT: String(port),
    PROCTOR_DEMO: 'false',
    PROCTOR_DATA_DIR: fs.mkdtempSync(path.join(dataRoot, 'server-')),
    PROCTOR_DB_POOL_MAX: db.embedded ? '1' : '4',
    PROCTOR_EXECUTOR_CONCURRENCY: '2',
    PROCTOR_EXECUTOR_POLL_MS: '150',
    PROCTOR_HEARTBEAT_MS: '300',
    PROCTOR_LOST_RUN_S: '3',
    PROCTOR_SWEEP_INTERVAL_S: '0.5',
    ...extra,
  });
  servers.push(process);
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url);
  return { url, process };
}

beforeAll(async () => {
  db = await createTestDatabase();
  repo = createTestRepository();
  dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-processes-'));
  fs.chmodSync(dataRoot, 0o711);
  const project = await createProject(db.sql, { name: 'shared', repoUrl: repo.dir, repoName: 'acme/shared' });
  key = await createKey(db.sql, { projectId: project.id });
  await db.sql`insert into environments (project_id, slug, name) values (${project.id}, 'ci', 'CI')`;
});
// Each test's servers stop with it: one left running would claim the next test's runs.
afterEach(async () => {
  for (const server of servers) server.child.kill('SIGKILL');
  await Promise.all(servers.map((server) => server.exited));
  servers.length = 0;
});
afterAll(async () => {
  await db?.drop();
  repo?.cleanup();
  fs.rmSync(dataRoot, { recursive: true, force: true });
});

describe('several server processes on one database', () => {
  // Several server processes share work on PostgreSQL; the embedded database serves one process
  // (its lock file refuses a second), and its single backend cannot serve two servers' connections.
  it.skipIf(!process.env.DATABASE_URL)('when two servers share 10 runs, then both execute some and none is executed twice', async () => {
    const [a, b] = await Promise.all([serve(), serve()]);
    const apiA = client((a as { url: string }).url, key);
    const apiB = client((b as { url: string }).url, key);
    const ids: number[] = [];
    try {
      for (let i = 0; i < 10; i++) ids.push(await trigger(i % 2 === 0 ? apiA : apiB, { environment: 'ci', tags: ['quick'] }));
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${a?.process.output()}\n${b?.process.output()}`, { cause: error });
    }
    for (const id of ids) {
      const run = await waitForRun(apiA, id, undefined, 240_000);
      expect(run.testRun, `${JSON.stringify(run.testRun)}\n${a?.process.output()}\n${b?.process.output()}`).toMatchObject({ state: 'passed', total_count: 2 });
    }
    const runs = await db.sql<{ id: number; claimed_by: string; executions: number; attempts: number }[]>`
      select r.id, r.claimed_by, r.executions, (select count(*)::int from test_results t where t.test_run_id = r.id) as attempts
      from test_runs r where r.id = any(${ids}::int[])`;
    expect(runs.map((r) => r.executions)).toEqual(Array(10).fill(1));
    expect(runs.map((r) => r.attempts)).toEqual(Array(10).fill(2));
    expect(new Set(runs.map((r) => r.claimed_by)).size).toBe(2);
    a?.process.child.kill('SIGTERM');
    b?.process.child.kill('SIGTERM');
    expect(await a?.process.exited).toBe(0);
    expect(await b?.process.exited).toBe(0);
  });

  it('when the server executing a run is killed and takeovers are off, then the next server ends it as error in bounded time and picks up a pending run', async () => {
    const first = await serve({ PROCTOR_HTTP_WORKERS: '2' });
    const api = client(first.url, key);
    const slow = await trigger(api, { environment: 'ci', tags: ['slow'], environment_variables_overrides: [{ name: 'SLOW', value: '1' }] });
    await waitForRun(api, slow, ['running']);
    const firstWorkers = httpWorkersOf(first.process.child.pid as number);
    // On the embedded database the server is one process, workers asked for or not.
    expect(firstWorkers).toHaveLength(db.embedded ? 0 : 2);
    first.process.child.kill('SIGKILL');
    await first.process.exited;
    // Its HTTP workers go with it: nothing keeps serving for a dead server.
    await waitUntil(() => firstWorkers.every((pid) => !isAlive(pid)), 10_000, 'the HTTP workers of the killed server gone');
    const orphans = runProcesses(first.url, slow);

    // While no server runs, a run triggered straight into the database waits, pending.
    const [pending] = await db.sql<{ id: number }[]>`
      insert into test_runs (project_id, environment_id, state, origin, tags)
      select project_id, id, 'pending', 'api', '{quick}' from environments where slug = 'ci' and project_id =
        (select project_id from api_keys where id = ${key.split('_')[2] as string})
      returning id`;

    const killedAt = Date.now();
    const second = await serve({ PROCTOR_RUN_TAKEOVERS: '0' });
    const next = client(second.url, key);
    const lost = await waitForRun(next, slow, ['error'], 30_000);
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect(lost.testRun.error_reason).toContain('executor running this run was lost');
    expect((await waitForRun(next, pending?.id as number)).testRun).toMatchObject({ state: 'passed', total_count: 2 });
    for (const pid of orphans) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });

  it('when the server executing a run dies, then another server takes the run over and runs only the tests left without a result, each once', async () => {
    // A test that waits for a file the run names: the run is held half done while its server dies.
    // Its file sorts after the quick tests', which Playwright runs first.
    const gateDir = fs.mkdtempSync(path.join(dataRoot, 'gate-'));
    fs.chmodSync(gateDir, 0o755);
    const gate = path.join(gateDir, 'open');
    fs.writeFileSync(
      path.join(repo.dir, 'tests/zz-gate.spec.ts'),
      `import fs from 'node:fs';\nimport { test } from '@playwright/test';\n` +
        `test('waits for its gate', { tag: '@gate' }, async () => {\n` +
        `  test.skip(!process.env.GATE_FILE, 'only when a run names a gate');\n` +
        `  while (!fs.existsSync(process.env.GATE_FILE)) await new Promise((resolve) => setTimeout(resolve, 200));\n});\n`,
    );
    git(repo.dir, 'add', 'tests/zz-gate.spec.ts');
    git(repo.dir, 'commit', '--quiet', '-m', 'gate');

    const first = await serve();
    const api = client(first.url, key);
    const runId = await trigger(api, { environment: 'ci', tags: ['quick', 'gate'], environment_variables_overrides: [{ name: 'GATE_FILE', value: gate }] });
    // Some tests have their results, the gate's are under way.
    await waitUntil(async () => (await db.sql`select 1 from test_results where test_run_id = ${runId} and is_final`).length >= 1, 120_000, 'a first result');
    const before = await db.sql<{ test_case_id: string; started_at: Date | null }[]>`
      select test_case_id, started_at from test_results where test_run_id = ${runId} and is_final`;
    // The server dies with its machine: its process and the run's processes with it.
    const processes = runProcesses(first.url, runId);
    first.process.child.kill('SIGKILL');
    await first.process.exited;
    for (const pid of processes) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    fs.writeFileSync(gate, '');
    fs.chmodSync(gate, 0o644);

    const second = await serve();
    const run = (await waitForRun(client(second.url, key), runId, undefined, 240_000)).testRun;
    expect(run, second.process.output()).toMatchObject({ state: 'passed', total_count: 4, failed_count: 0 });
    const rows = await db.sql<{ test_case_id: string; retry: number; is_final: boolean; started_at: Date | null }[]>`
      select test_case_id, retry, is_final, started_at from test_results where test_run_id = ${runId}`;
    // Every test once, on its first try: the four tests, each with its one final attempt.
    expect(rows.map((row) => `${row.retry}:${row.is_final}`).sort()).toEqual(Array(4).fill('0:true'));
    // What the first server stored stayed as it was: those tests did not run again.
    for (const kept of before) {
      const row = rows.find((r) => r.test_case_id === kept.test_case_id);
      expect(row?.started_at?.getTime()).toBe(kept.started_at?.getTime());
    }
    const [claims] = await db.sql<{ executions: number }[]>`select executions from test_runs where id = ${runId}`;
    expect(claims?.executions).toBe(2);
  });
});

describe('a server serving from HTTP workers', () => {
  it.skipIf(!process.env.DATABASE_URL)(
    'when it serves from two workers, then a cancel through one stops the run at once, a killed worker is replaced, and SIGTERM ends them all',
    async () => {
      // Heartbeats far apart: only the worker's message to the primary can stop the run in time.
      const server = await serve({ PROCTOR_HTTP_WORKERS: '2', PROCTOR_EXECUTOR_CONCURRENCY: '1', PROCTOR_HEARTBEAT_MS: '60000', PROCTOR_LOST_RUN_S: '300' });
      const primary = server.process.child.pid as number;
      const workers = httpWorkersOf(primary);
      expect(workers).toHaveLength(2);
      const api = client(server.url, key);
      const runId = await trigger(api, { environment: 'ci', tags: ['slow'], environment_variables_overrides: [{ name: 'SLOW', value: '1' }] });
      await waitForRun(api, runId, ['running']);
      await waitUntil(() => runProcesses(server.url, runId).length >= 3, 30_000, 'Playwright, its worker and the browser');
      expect((await api.post(`/api/test-runs/${runId}/cancel`, { reason: 'stop' })).status).toBe(200);
      await waitUntil(() => runProcesses(server.url, runId).length === 0, 15_000, 'no process of the run left');

      process.kill(workers[0] as number, 'SIGKILL');
      await waitUntil(
        () => {
          const now = httpWorkersOf(primary);
          return now.length === 2 && !now.includes(workers[0] as number);
        },
        15_000,
        'a new worker in place of the killed one',
      );
      expect((await api.get('/api/environments')).status).toBe(200);

      const last = httpWorkersOf(primary);
      server.process.child.kill('SIGTERM');
      expect(await server.process.exited).toBe(0);
      expect(last.filter(isAlive)).toEqual([]);
    },
  );
});

describe('runs that cannot finish', () => {
  it('when a run outlasts its time limit, then it is stopped and ends error with the reason', async () => {
    const server = await serve({ PROCTOR_RUN_TIMEOUT_MIN: '0.1' });
    const api = client(server.url, key);
    const runId = await trigger(api, { environment: 'ci', tags: ['slow'], environment_variables_overrides: [{ name: 'SLOW', value: '1' }] });
    const run = await waitForRun(api, runId, undefined, 60_000);
    expect(run.testRun.state).toBe('error');
    expect(run.testRun.error_reason).toContain('exceeded its time limit');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(runProcesses(server.url, runId)).toEqual([]);
  });

  it('when a shard crashes before it reports, then the run ends error with its output', async () => {
    const server = await serve();
    const api = client(server.url, key);
    const runId = await trigger(api, {
      environment: 'ci',
      tags: ['quick'],
      environment_variables_overrides: [{ name: 'CRASH_ON_LOAD', value: 'shard-crash-marker' }],
    });
    const run = await waitForRun(api, runId, undefined, 60_000);
    expect(run.testRun.state).toBe('error');
    expect(run.testRun.error_reason).toContain('shard 1 ended without reporting its end');
    expect(run.testRun.error_reason).toContain('shard-crash-marker');
  });
});
