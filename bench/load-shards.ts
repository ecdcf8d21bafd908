// The load bench/load offers a server: shards reporting into their runs as the reporter does. Each
// joins its run by the CI build's run key, lists its tests, sends its attempts as they finish (a
// batch a second, the reporter's flush, gzipped), then ends. Every body is made and compressed
// before the clock starts: the reporter's own process, on its own machine, does that work.
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { WireAttempt } from '../reporter/src/api/wire.ts';
import { attempt, attemptsOf, listedTest } from '../test/helpers/attempts.ts';
import { testIdOf } from './lib.ts';

export const SHARDS_PER_RUN = Number(process.env.BENCH_LOAD_SHARDS_PER_RUN ?? 10);
export const TESTS_PER_SHARD = Number(process.env.BENCH_LOAD_TESTS_PER_SHARD ?? 40);
/** How long a shard's tests take, start to end; shards start within STAGGER_S of each other. */
const SHARD_S = Number(process.env.BENCH_LOAD_SHARD_SECONDS ?? 30);
const STAGGER_S = 5;
const FLUSH_MS = 1000;

export const LOAD_SHAPE = `${SHARDS_PER_RUN} per run, ${TESTS_PER_SHARD} tests each, a batch a second for ${SHARD_S} s, starting within ${STAGGER_S} s`;

export interface Timed {
  /** When the request was sent, from the start of the load. */
  at: number;
  kind: 'report' | 'begin' | 'results' | 'end';
  ms: number;
  status: number;
}

export interface Offered {
  timings: Timed[];
  failures: string[];
  seconds: number;
  /** Attempts sent, each once. */
  sent: number;
}

interface Shard {
  run: number;
  shard: number;
  startMs: number;
  report: Buffer;
  begin: Buffer;
  /** A gzipped batch a second; null for a second in which no test finished. */
  batches: (Buffer | null)[];
  end: Buffer;
  attempts: number;
}

/** One shard's attempts: one test in twenty fails (twice), one in twenty is flaky. */
function shardOf(run: number, shard: number): Shard {
  const tests = Array.from({ length: TESTS_PER_SHARD }, (_, i) => testIdOf(run * 1_000_000 + shard * 10_000 + i));
  const attempts = tests.map((id, i) => (i % 20 === 7 ? attemptsOf(id, 'unexpected') : i % 20 === 13 ? attemptsOf(id, 'flaky') : [attempt(id)]));
  const json = (body: unknown) => Buffer.from(JSON.stringify(body));
  return {
    run,
    shard,
    startMs: Math.random() * STAGGER_S * 1000,
    report: json({ environment: 'load', run_key: `build-${run}`, total_shards: SHARDS_PER_RUN }),
    begin: json({ tests: tests.map((id) => listedTest(id)), complete: false }),
    batches: flushes(attempts).map((batch) => (batch.length > 0 ? gzipSync(json({ shard, results: batch })) : null)),
    end: json({ status: 'failed' }),
    attempts: attempts.flat().length,
  };
}

/** The attempts each second of the shard's time, as its flushes send them. */
function flushes(attempts: WireAttempt[][]): WireAttempt[][] {
  const seconds = Math.max(1, Math.round((SHARD_S * 1000) / FLUSH_MS));
  const batches: WireAttempt[][] = Array.from({ length: seconds }, () => []);
  attempts.forEach((testAttempts, i) => batches[Math.floor((i * seconds) / attempts.length)]?.push(...testAttempts));
  return batches;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function send(agent: http.Agent, url: string, key: string, path: string, body: Buffer, gzip: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
          ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', (error) => resolve({ status: 0, text: error.message }));
    req.end(body);
  });
}

/** `shardCount` shards (SHARDS_PER_RUN to a run) report into the server at `url` at once; every request timed. */
export async function offerLoad(url: string, key: string, shardCount: number): Promise<Offered> {
  const shards = Array.from({ length: shardCount }, (_, n) => shardOf(Math.floor(n / SHARDS_PER_RUN), (n % SHARDS_PER_RUN) + 1));
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const timings: Timed[] = [];
  const failures: string[] = [];
  const started = performance.now();
  const call = async (kind: Timed['kind'], path: string, body: Buffer, gzip = false) => {
    const sentAt = performance.now();
    const answer = await send(agent, url, key, path, body, gzip);
    timings.push({ at: sentAt - started, kind, ms: performance.now() - sentAt, status: answer.status });
    if (answer.status < 200 || answer.status >= 300) failures.push(`${kind} ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
    return answer;
  };
  try {
    await Promise.all(
      shards.map(async (shard) => {
        await sleep(shard.startMs);
        const joined = await call('report', '/api/test-runs/report', shard.report);
        const runId = (JSON.parse(joined.text) as { data: { test_run: { id: number } } }).data.test_run.id;
        await call('begin', `/api/test-runs/${runId}/shards/${shard.shard}/begin`, shard.begin);
        for (const batch of shard.batches) {
          const tick = performance.now();
          if (batch) await call('results', `/api/test-runs/${runId}/results`, batch, true);
          await sleep(Math.max(0, FLUSH_MS - (performance.now() - tick)));
        }
        await call('end', `/api/test-runs/${runId}/shards/${shard.shard}/end`, shard.end);
      }),
    );
  } finally {
    agent.destroy();
  }
  return { timings, failures, seconds: (performance.now() - started) / 1000, sent: shards.reduce((sum, shard) => sum + shard.attempts, 0) };
}
