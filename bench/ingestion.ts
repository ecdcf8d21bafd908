// The HTTP ingestion path against a raw COPY of the same rows into the same table, interleaved in
// rounds: bench/ingest runs it on a table of 200,000 rows, bench/scale on one of 100 million.
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { postGzipped, postJson } from '../reporter/src/api/transport.ts';
import { attempt } from '../test/helpers/attempts.ts';
import { copyLines, copyRows } from '../server/src/db.ts';
import { RESULT_COLUMNS, resultRow } from '../server/src/runs/results.ts';
import { type BenchDatabase, type BenchServer, median, settleWrites, testIdOf } from './lib.ts';

export const BATCH = 500;
export const IN_FLIGHT = 2;
const NONE_SNOOZED: ReadonlySet<string> = new Set();

/** Attempts as a suite's reporter sends them: one in ten a failure with its message and location. */
function attempts(from: number, count: number) {
  const startedAt = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    const failed = n % 10 === 0;
    return attempt(testIdOf(n), {
      final: failed ? 'unexpected' : 'expected',
      duration: 100 + (n % 900),
      error_message: failed ? `Error: expect(received).toBe(expected)\n\nExpected: ${n}\nReceived: ${n + 1}` : null,
      error_location: failed ? `tests/t${n % 50}.spec.ts:${n % 200}:5` : null,
      started_at: startedAt,
      finalError: failed ? 'Error: mismatch' : null,
      failureGroupId: failed ? 'fg_bench' : null,
    });
  });
}

/** The table as a project's months of results leave it: `rows` rows of earlier runs, untimed. */
export async function preloadHistory(db: BenchDatabase, projectId: number, environmentId: number, rows: number): Promise<void> {
  const perRun = 10_000;
  for (let done = 0; done < rows; done += perRun) {
    const [run] = await db.sql<{ id: number }[]>`
      insert into test_runs (project_id, environment_id, state, origin) values (${projectId}, ${environmentId}, 'passed', 'reporter') returning id`;
    await copyRows(
      db.sql,
      'test_results',
      RESULT_COLUMNS,
      attempts(0, perRun).map((a) => resultRow((run as { id: number }).id, 1, a, NONE_SNOOZED)),
    );
  }
  await db.sql`vacuum analyze test_results`;
  await settleWrites(db.sql);
}

async function newRun(db: BenchDatabase, projectId: number, environmentId: number): Promise<number> {
  const [run] = await db.sql<{ id: number }[]>`
    insert into test_runs (project_id, environment_id, state, origin) values (${projectId}, ${environmentId}, 'running', 'reporter') returning id`;
  return (run as { id: number }).id;
}

/** A batch in COPY's text format, encoded as the server's COPY path encodes it. */
function copyText(runId: number, batch: ReturnType<typeof attempts>): string {
  return copyLines(batch.map((a) => resultRow(runId, 1, a, NONE_SNOOZED)));
}

export interface IngestionComparison {
  httpRates: number[];
  copyRates: number[];
  /** Median results per second of each path. */
  http: number;
  copy: number;
}

/**
 * `rounds` rounds (after `warmRounds` untimed), each a run of `batches` batches of 500 results
 * through the server's HTTP ingestion, IN_FLIGHT under way at once as the reporter sends, then the
 * same rows by one COPY into the same table.
 */
export async function compareIngestion(
  db: BenchDatabase,
  server: BenchServer,
  project: { key: string; projectId: number; environmentId: number; environmentSlug: string },
  batchCount: number,
  rounds: number,
  warmRounds = 1,
): Promise<IngestionComparison> {
  const { key, projectId, environmentId } = project;
  const transport = { url: server.url, apiKey: key, projectId: null, maxAttempts: 1, maxBackoffMs: 0 };
  const total = BATCH * batchCount;
  const batches = Array.from({ length: batchCount }, (_, b) => attempts(b * BATCH, BATCH));
  // The reporter serialises and gzips in its own process: done before the clock starts.
  const payloads = batches.map((batch) => gzipSync(JSON.stringify({ shard: 1, results: batch })));
  const listed = Array.from({ length: total }, (_, n) => ({
    id: testIdOf(n),
    title: `test ${n}`,
    file_path: `tests/t${n % 50}.spec.ts`,
    suites: [],
    runner_project: 'chromium',
    tags: [],
    line: n,
    column: 1,
  }));

  /** One batch after another, IN_FLIGHT under way at once, as the reporter sends. */
  async function timeHttp(): Promise<number> {
    const runId = (await postJson<{ data: { test_run: { id: number } } }>(transport, '/api/test-runs/report', { environment: project.environmentSlug })).data
      .test_run.id;
    for (let from = 0; from < total; from += 5000) {
      await postJson(transport, `/api/test-runs/${runId}/shards/1/begin`, { tests: listed.slice(from, from + 5000), complete: false });
    }
    const post = (payload: Buffer) => postGzipped(transport, `/api/test-runs/${runId}/results`, payload);
    const started = performance.now();
    const queue = [...payloads];
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let payload = queue.shift(); payload; payload = queue.shift()) await post(payload);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from test_results where test_run_id = ${runId}`;
    if (stored?.n !== total) throw new Error(`expected ${total} stored results, found ${stored?.n}`);
    return total / seconds;
  }

  /** The same rows by one COPY streaming every batch: COPY at its best, with one commit, where a
   * COPY per batch would pay a transaction each like the HTTP path and be a weaker baseline. */
  async function timeCopy(): Promise<number> {
    const runId = await newRun(db, projectId, environmentId);
    const chunks = batches.map((batch) => copyText(runId, batch));
    const started = performance.now();
    const writable = await db.sql`copy test_results (${db.sql(RESULT_COLUMNS)}) from stdin`.writable();
    await pipeline(Readable.from(chunks), writable);
    return total / ((performance.now() - started) / 1000);
  }

  for (let round = 0; round < warmRounds; round++) {
    await timeHttp();
    await timeCopy();
  }
  const httpRates: number[] = [];
  const copyRates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    httpRates.push(await timeHttp());
    copyRates.push(await timeCopy());
  }
  return { httpRates, copyRates, http: median(httpRates), copy: median(copyRates) };
}
