import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, isDatabaseUnavailable, type Sql } from '../../server/src/db.ts';
import { resultWriter } from '../../server/src/runs/group-commit.ts';
import { migrate } from '../../server/src/migrate.ts';
import { canMakeCluster, createPrivateCluster, type PrivateCluster } from '../helpers/cluster.ts';
import { reporterEnv, runSampleSuite } from '../helpers/playwright.ts';
import { type ServedNode, serveNode } from '../helpers/process.ts';
import { runIdLinkedIn, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, testId } from '../helpers/server.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';

let cluster: PrivateCluster;
let sql: Sql;
let key: string;
let projectId: number;
let server: ServedNode;
let url: string;

beforeAll(async () => {
  cluster = await createPrivateCluster();
  sql = connect(cluster.url, 2);
  await migrate(sql);
  const project = await seedProject(sql);
  key = project.key;
  projectId = project.projectId;
  await seedEnvironment(sql, project.projectId, 'local');
  server = await serveNode({
    DATABASE_URL: cluster.url,
    PROCTOR_DEMO: 'false',
    PROCTOR_EXECUTOR_CONCURRENCY: '0',
    PROCTOR_DB_POOL_MAX: '2',
    PROCTOR_SWEEP_INTERVAL_S: '1',
  });
  url = server.url;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await sql?.end({ timeout: 1 }).catch(() => undefined);
  cluster?.destroy();
});

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: { data: unknown; error?: unknown } }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as { data: unknown } };
}

async function get(path: string, timeoutMs = 10_000): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs) });
  return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
}

describe.skipIf(!canMakeCluster)('a database outage', () => {
  it('when PostgreSQL stops under 15 requests and starts again, then each got a 503 with Retry-After, and the pool recovers by itself', async () => {
    expect((await get('/api/environments')).status).toBe(200);
    cluster.stop();
    try {
      // More requests than the pool has slots: each one used to leave a slot stuck for good.
      for (let i = 0; i < 15; i++) {
        const answer = await get('/api/environments');
        expect(answer.status).toBe(503);
        expect(answer.retryAfter).toBe('2');
        expect(answer.body).toEqual({ data: null, error: { message: expect.stringContaining('database is unavailable') } });
      }
      expect((await get('/healthz')).status).toBe(503);
    } finally {
      cluster.start();
    }
    await waitUntil(async () => (await get('/api/environments').catch(() => ({ status: 0 }))).status === 200, 30_000, 'the API answering again');
    const answers = await Promise.all(Array.from({ length: 20 }, () => get('/api/environments')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect((await get('/healthz')).status).toBe(200);
  });

  it('when the first result batch a server writes meets the outage, then the batches after it are written once PostgreSQL is back', async () => {
    const created = await call(url, 'POST', '/api/test-runs/report', { environment: 'local' });
    expect(created.status).toBe(200);
    const runId = (created.body.data as { test_run: { id: number } }).test_run.id;
    const tests = [testId(1), testId(2)];
    expect((await call(url, 'POST', `/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map((id) => listedTest(id)), complete: true })).status).toBe(200);
    // A writer as a freshly started server has one: its first batch asks what the database takes.
    const pool = connect(cluster.url, 2);
    const writer = resultWriter(pool, true);
    const attempts = tests.map((id) => attempt(id));
    try {
      cluster.stop();
      try {
        await expect(writer.record(projectId, runId, 1, attempts, new Date())).rejects.toSatisfy(isDatabaseUnavailable);
      } finally {
        cluster.start();
      }
      await waitUntil(async () => await pool`select 1`.then(() => true).catch(() => false), 30_000, 'the pool reconnected');
      await expect(writer.record(projectId, runId, 1, attempts, new Date())).resolves.toBe(2);
    } finally {
      await pool.end({ timeout: 1 });
    }
  });

  it('when PostgreSQL is stopped for 10 s while the sample suite reports, then the server serves again without a restart and no result is lost', async () => {
    let outage: Promise<void> = Promise.resolve();
    let stoppedAt = 0;
    let startedAt = 0;
    const run = await runSampleSuite({
      env: reporterEnv(url, key),
      onStart: () => {
        outage = (async () => {
          // After the run is created, while results are being sent.
          await new Promise((resolve) => setTimeout(resolve, 3000));
          cluster.stop();
          stoppedAt = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 10_000));
          cluster.start();
          startedAt = Date.now();
        })();
      },
    });
    const finishedAt = Date.now();
    await outage;
    expect(stoppedAt).toBeGreaterThan(0);
    expect(finishedAt, 'the suite was still reporting when PostgreSQL came back').toBeGreaterThan(startedAt);
    const delivered = /\[proctor\] 14\/14 results delivered to run #\d+ \(failed\)/;
    expect(run.output).toMatch(delivered);
    // The run's id from the line's link: its words name the run by its number in the project.
    const runId = runIdLinkedIn(run.output, delivered);
    const stored = await sql<{ test_case_id: string; retry: number; status: string }[]>`
      select test_case_id, retry, status from test_results where test_run_id = ${runId} order by 1, 2`;
    expect(stored.map((r) => `${r.test_case_id}#${r.retry}:${r.status}`)).toEqual(run.recorded.map((a) => `${a.id}#${a.retry}:${a.status}`).sort());
    expect(server.child.exitCode).toBeNull();
    expect((await get(`/api/test-runs/${runId}`)).status).toBe(200);
  });
});
