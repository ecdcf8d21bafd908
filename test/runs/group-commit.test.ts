import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takesCopyFromStdin } from '../../server/src/db.ts';
import { beginShard, endShard } from '../../server/src/runs/ingest.ts';
import { groupCommitWriter } from '../../server/src/runs/group-commit.ts';
import { attempt, attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedProjectWithEnvironment, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Group commit (PROCTOR_GROUP_COMMIT, on by default with PostgreSQL): result batches that arrive
// together are written in one transaction with one COPY, each request answered once its rows are
// committed. What one batch alone promises holds for each batch of a group.

let server: TestServer;
let projectId: number;
let api: ReturnType<typeof client>;
let grouped: boolean;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProjectWithEnvironment(server.sql, 'ci');
  projectId = project.projectId;
  api = client(server.url, project.key);
  // The embedded database takes no COPY: each batch is then written on its own, which the other tests cover.
  grouped = await takesCopyFromStdin(server.sql);
});

/** Why a test of groups does not run here: it would pass having tested nothing. */
const NOT_GROUPED = 'the embedded database takes no COPY: batches are not grouped, each is written on its own';
afterAll(async () => server?.close());

async function runWithTests(count: number, shards = 1): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'ci', total_shards: shards })).body.data.test_run.id as number;
  for (let shard = 1; shard <= shards; shard++) {
    const tests = Array.from({ length: count }, (_, i) => listedTest(testId(shard * 1000 + i)));
    await beginShard(server.sql, projectId, runId, shard, { tests, commit: null, complete: true }, server.clock.now);
  }
  return runId;
}

describe('result batches written together', () => {
  it('when the same batch is sent by 50 requests at once, then it is stored once, and the answers count it once between them', async (ctx) => {
    if (!grouped) ctx.skip(NOT_GROUPED);
    const runId = await runWithTests(3);
    const batch = { shard: 1, results: [attempt(testId(1000)), ...attemptsOf(testId(1001), 'flaky'), attempt(testId(1002))] };
    const answers = await Promise.all(Array.from({ length: 50 }, () => api.post(`/api/test-runs/${runId}/results`, batch)));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(answers.every((a) => a.body.data.received === 4)).toBe(true);
    expect(answers.reduce((sum, a) => sum + (a.body.data.recorded as number), 0)).toBe(4);
    const [stored] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_results where test_run_id = ${runId}`;
    expect(stored?.n).toBe(4);
    await endShard(server.sql, projectId, runId, 1, { status: 'passed', errors: [] }, server.clock.now);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ total_count: 3, success_count: 2, flaky_count: 1 });
  });

  it('when batches of several runs are handed over in one turn, then they are committed by one transaction and each run counts its own', async (ctx) => {
    if (!grouped) ctx.skip(NOT_GROUPED);
    const runs = [await runWithTests(10), await runWithTests(10), await runWithTests(10)];
    const writer = groupCommitWriter(server.sql);
    const recorded = await Promise.all(
      runs.flatMap((runId) =>
        Array.from({ length: 10 }, (_, i) =>
          writer.record(projectId, runId, 1, i === 3 ? attemptsOf(testId(1000 + i), 'unexpected') : [attempt(testId(1000 + i))], server.clock.now),
        ),
      ),
    );
    expect(recorded.reduce((sum, n) => sum + n, 0)).toBe(3 * 11);
    // Rows written by one transaction carry its id.
    const [written] = await server.sql<{ transactions: number; rows: number }[]>`
      select count(distinct xmin::text)::int as transactions, count(*)::int as rows from test_results where test_run_id = any(${runs}::int[])`;
    expect(written).toEqual({ transactions: 1, rows: 33 });
    const counts = await server.sql<{ failed_count: number; success_count: number; total_count: number }[]>`
      select failed_count, success_count, total_count from test_runs where id = any(${runs}::int[]) order by id`;
    expect(counts).toEqual(Array(3).fill({ failed_count: 1, success_count: 9, total_count: 10 }));
  });

  it("when one batch of a group names a run that has ended, then that batch alone is refused and the group's others are stored", async (ctx) => {
    if (!grouped) ctx.skip(NOT_GROUPED);
    const [open, ended] = [await runWithTests(2), await runWithTests(2)];
    await endShard(server.sql, projectId, ended, 1, { status: 'passed', errors: [] }, server.clock.now);
    const writer = groupCommitWriter(server.sql);
    const [stored, refused, unknown] = await Promise.allSettled([
      writer.record(projectId, open, 1, [attempt(testId(1000)), attempt(testId(1001))], server.clock.now),
      writer.record(projectId, ended, 1, [attempt(testId(1000))], server.clock.now),
      writer.record(projectId + 1000, open, 1, [attempt(testId(1000))], server.clock.now),
    ]);
    expect(stored).toEqual({ status: 'fulfilled', value: 2 });
    expect(refused).toMatchObject({ status: 'rejected', reason: { message: `test run ${ended} is already passed` } });
    expect(unknown).toMatchObject({ status: 'rejected', reason: { message: 'test run not found' } });
    const rows = await server.sql<{ test_run_id: number }[]>`select test_run_id from test_results where test_run_id = any(${[open, ended]}::int[])`;
    expect(rows.map((r) => r.test_run_id)).toEqual([open, open]);
  });
});

describe('a batch the database refuses, in a group', () => {
  /** A second project with a run of `count` tests, and its client. */
  async function otherProject(count: number) {
    const project = await seedProjectWithEnvironment(server.sql, 'ci');
    const other = client(server.url, project.key);
    const runId = (await other.post('/api/test-runs/report', { environment: 'ci', total_shards: 1 })).body.data.test_run.id as number;
    const tests = Array.from({ length: count }, (_, i) => listedTest(testId(1000 + i)));
    await beginShard(server.sql, project.projectId, runId, 1, { tests, commit: null, complete: true }, server.clock.now);
    return { projectId: project.projectId, api: other, runId };
  }

  it("when one project sends batches the database would refuse among another's, then they alone are refused (400) and the other's are all stored", async () => {
    const hostile = await runWithTests(30);
    const other = await otherProject(300);
    const refused = Array.from({ length: 15 }, (_, i) => ({
      shard: 1,
      results: [attempt(testId(1000 + 2 * i)), attempt(testId(1001 + 2 * i), { started_at: '2026-11-28T10:00:00+16:00' })],
    }));
    const kept = Array.from({ length: 60 }, (_, i) => ({ shard: 1, results: Array.from({ length: 5 }, (_, j) => attempt(testId(1000 + 5 * i + j))) }));
    // One of the first project's for every four of the other's, all at once: groups mix them.
    const sends = kept.map((batch) => other.api.post(`/api/test-runs/${other.runId}/results`, batch));
    const refusals = refused.map((batch) => api.post(`/api/test-runs/${hostile}/results`, batch));
    const [keptAnswers, refusedAnswers] = await Promise.all([Promise.all(sends), Promise.all(refusals)]);
    expect(keptAnswers.map((a) => a.status)).toEqual(Array(60).fill(200));
    expect(new Set(refusedAnswers.map((a) => `${a.status} ${a.body.error.message}`))).toEqual(
      new Set(['400 body.results.1.started_at: must have a UTC offset within ±15:59']),
    );
    const stored = await server.sql<{ test_run_id: number; n: number }[]>`
      select test_run_id, count(*)::int as n from test_results where test_run_id = any(${[hostile, other.runId]}::int[]) group by test_run_id`;
    expect(stored).toEqual([{ test_run_id: other.runId, n: 300 }]);
    const [counts] = await server.sql<{ success_count: number }[]>`select success_count from test_runs where id = ${other.runId}`;
    expect(counts?.success_count).toBe(300);
  });

  it.for([
    ['an offset PostgreSQL does not take', { started_at: '2026-11-28T10:00:00+16:00' }, '22009'],
    ['NUL in its output', { stdout_tail: 'a\u0000b' }, '22021'],
  ] as const)(
    "when a group holds a batch with %s (past validation), then that batch alone fails and the group's others, another project's and a retried one's, are stored",
    async ([, refusedFields, code], ctx) => {
      if (!grouped) ctx.skip(NOT_GROUPED);
      const runId = await runWithTests(10);
      const other = await otherProject(10);
      await groupCommitWriter(server.sql).record(other.projectId, other.runId, 1, [attempt(testId(1000))], server.clock.now);
      const writer = groupCommitWriter(server.sql);
      const now = server.clock.now;
      const [refused, ...answers] = await Promise.allSettled([
        writer.record(projectId, runId, 1, [attempt(testId(1000)), attempt(testId(1001), refusedFields)], now),
        writer.record(projectId, runId, 1, [attempt(testId(1002))], now),
        // A retried batch: its first attempt is stored already.
        writer.record(other.projectId, other.runId, 1, [attempt(testId(1000)), attempt(testId(1001))], now),
        ...Array.from({ length: 8 }, (_, i) => writer.record(other.projectId, other.runId, 1, [attempt(testId(1002 + i))], now)),
      ]);
      expect(refused).toMatchObject({ status: 'rejected', reason: { code } });
      expect(answers).toEqual([1, 1, ...Array(8).fill(1)].map((value) => ({ status: 'fulfilled', value })));
      const stored = await server.sql<{ test_run_id: number; n: number }[]>`
        select test_run_id, count(*)::int as n from test_results where test_run_id = any(${[runId, other.runId]}::int[]) group by test_run_id order by test_run_id`;
      expect(stored).toEqual([
        { test_run_id: runId, n: 1 },
        { test_run_id: other.runId, n: 10 },
      ]);
      const counts = await server.sql<
        { success_count: number }[]
      >`select success_count from test_runs where id = any(${[runId, other.runId]}::int[]) order by id`;
      expect(counts.map((c) => c.success_count)).toEqual([1, 10]);
    },
  );
});
