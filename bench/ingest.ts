// Results per second through the HTTP ingestion path (`proctor serve` as it runs by default: its
// own process with an HTTP worker per core, fed by the reporter's own client: gzip, one batch per
// request, two in flight) against a raw COPY of the same rows into the same table, measured in the
// same run. Target: HTTP at least 40% of COPY's rows per second, batches of 500.
import os from 'node:os';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { postGzipped, postJson } from '../reporter/src/transport.ts';
import { attempt } from '../test/helpers/attempts.ts';
import { copyLines, copyRows } from '../server/src/db.ts';
import { RESULT_COLUMNS, resultRow } from '../server/src/runs/results.ts';
import { benchDatabase, benchProject, benchServerProcess, median, settleWrites, testIdOf } from './lib.ts';

const BATCH = 500;
const BATCHES = Number(process.env.BENCH_INGEST_BATCHES ?? 40);
// This machine's COPY alone swings 75k-145k rows/s from one round to the next: the medians need rounds.
const ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? 11);
const TARGET = 0.4;
const IN_FLIGHT = 2;
/** Rows already in test_results when the timing starts. */
const HISTORY = Number(process.env.BENCH_INGEST_HISTORY ?? 200_000);
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

/** The table as a project's months of results leave it: HISTORY rows of earlier runs, untimed. */
async function preloadHistory(db: Awaited<ReturnType<typeof benchDatabase>>, projectId: number, environmentId: number, rows: number): Promise<void> {
  const perRun = 10_000;
  for (let done = 0; done < rows; done += perRun) {
    const [run] = await db.sql<{ id: number }[]>`
      insert into test_runs (project_id, environment_id, state, origin) values (${projectId}, ${environmentId}, 'passed', 'reporter') returning id`;
    await copyRows(db.sql, 'test_results', RESULT_COLUMNS, attempts(0, perRun).map((a) => resultRow((run as { id: number }).id, 1, a, NONE_SNOOZED)));
  }
  await db.sql`vacuum analyze test_results`;
  await settleWrites(db.sql);
}

async function newRun(db: Awaited<ReturnType<typeof benchDatabase>>, projectId: number, environmentId: number): Promise<number> {
  const [run] = await db.sql<{ id: number }[]>`
    insert into test_runs (project_id, environment_id, state, origin) values (${projectId}, ${environmentId}, 'running', 'reporter') returning id`;
  return (run as { id: number }).id;
}

/** A batch in COPY's text format, encoded as the server's COPY path encodes it. */
function copyText(runId: number, batch: ReturnType<typeof attempts>): string {
  return copyLines(batch.map((a) => resultRow(runId, 1, a, NONE_SNOOZED)));
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/ingest needs DATABASE_URL (a PostgreSQL server): the embedded database has no COPY FROM STDIN');
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  try {
    const { key, projectId, environmentId } = await benchProject(db.sql);
    const transport = { url: server.url, apiKey: key, projectId: null, maxAttempts: 1, maxBackoffMs: 0 };
    await preloadHistory(db, projectId, environmentId, HISTORY);
    const total = BATCH * BATCHES;
    const batches = Array.from({ length: BATCHES }, (_, b) => attempts(b * BATCH, BATCH));
    // The reporter serialises and gzips in its own process: done before the clock starts.
    const payloads = batches.map((batch) => gzipSync(JSON.stringify({ shard: 1, results: batch })));
    const listed = Array.from({ length: total }, (_, n) => ({
      id: testIdOf(n), title: `test ${n}`, file_path: `tests/t${n % 50}.spec.ts`, suites: [], runner_project: 'chromium', tags: [], line: n, column: 1,
    }));

    /** One batch after another, IN_FLIGHT under way at once, as the reporter sends. */
    async function timeHttp(): Promise<number> {
      const runId = (await postJson<{ data: { test_run: { id: number } } }>(transport, '/api/test-runs/report', { environment: 'bench' })).data.test_run.id;
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

    await timeHttp();
    await timeCopy();
    const httpRates: number[] = [];
    const copyRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      httpRates.push(await timeHttp());
      copyRates.push(await timeCopy());
    }
    const http = median(httpRates);
    const copy = median(copyRates);
    const ratio = http / copy;
    const fmt = (rate: number) => Math.round(rate).toLocaleString('en');
    console.log(
      `bench/ingest: ${total} results in batches of ${BATCH}, ${IN_FLIGHT} in flight, ${ROUNDS} interleaved rounds, ` +
        `test_results holding ${HISTORY.toLocaleString('en')} earlier rows (PostgreSQL; HTTP workers: auto, ${os.availableParallelism()} cores)`,
    );
    console.log(`  HTTP ingestion : median ${fmt(http)} results/s (rounds: ${httpRates.map(fmt).join(', ')})`);
    console.log(`  raw COPY       : median ${fmt(copy)} rows/s (rounds: ${copyRates.map(fmt).join(', ')})`);
    console.log(`  ratio          : ${(ratio * 100).toFixed(1)}% of COPY (target ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`);
  } finally {
    await server.close();
    await db.close();
  }
}

await main();
