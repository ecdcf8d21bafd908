// A busy hour: SHARDS_PER_RUN × RUNS shards (default 10 × 100 = 1,000) reporting at once into their
// runs against one `proctor serve` (its HTTP workers, as it runs by default), each as the reporter
// reports: it joins its run by the CI build's run key, lists its tests, sends its attempts as they
// finish (a batch a second, the reporter's flush), then ends. Checked: no request fails, every
// attempt sent is stored once, every run ends with its counts. Printed: request latency (target:
// p99 under 500 ms) and the peak memory of every Proctor process (target: under 512 MB in all).
import fs from 'node:fs';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { WireAttempt } from '../reporter/src/wire.ts';
import { attempt, attemptsOf, listedTest } from '../test/helpers/attempts.ts';
import { httpWorkersOf } from '../test/helpers/process.ts';
import { benchDatabase, benchProject, benchServerProcess, percentile, testIdOf } from './lib.ts';

const RUNS = Number(process.env.BENCH_LOAD_RUNS ?? 100);
const SHARDS_PER_RUN = Number(process.env.BENCH_LOAD_SHARDS_PER_RUN ?? 10);
const TESTS_PER_SHARD = Number(process.env.BENCH_LOAD_TESTS_PER_SHARD ?? 40);
/** How long a shard's tests take, start to end; shards start within STAGGER_S of each other. */
const SHARD_S = Number(process.env.BENCH_LOAD_SHARD_SECONDS ?? 30);
const STAGGER_S = 5;
const FLUSH_MS = 1000;
const P99_TARGET_MS = 500;
const MEMORY_TARGET_MB = 512;

interface Timed {
  kind: string;
  ms: number;
  status: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function request(url: string, key: string, method: string, path: string, body: Buffer, gzip: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      `${url}${path}`,
      {
        method,
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

/** One shard's tests and their attempts: one in twenty fails (twice), one in twenty is flaky. */
function shardWork(run: number, shard: number) {
  const tests = Array.from({ length: TESTS_PER_SHARD }, (_, i) => testIdOf(run * 1_000_000 + shard * 10_000 + i));
  const attempts = tests.map((id, i) => (i % 20 === 7 ? attemptsOf(id, 'unexpected') : i % 20 === 13 ? attemptsOf(id, 'flaky') : [attempt(id)]));
  return { tests, attempts };
}

/** The attempts each second of the shard's time, as its flushes send them. */
function flushes(attempts: WireAttempt[][]): WireAttempt[][] {
  const seconds = Math.max(1, Math.round((SHARD_S * 1000) / FLUSH_MS));
  const batches: WireAttempt[][] = Array.from({ length: seconds }, () => []);
  attempts.forEach((testAttempts, i) => batches[Math.floor((i * seconds) / attempts.length)]?.push(...testAttempts));
  return batches;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Peak memory, sampled: the largest sum of every process's resident memory, and each one's own peak (VmHWM). */
function watchMemory(primaryPid: number) {
  let peakSum = 0;
  const peaks = new Map<number, number>();
  const residentKb = (pid: number, field: 'VmRSS' | 'VmHWM') => {
    try {
      return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return 0;
    }
  };
  const sample = () => {
    const pids = [primaryPid, ...httpWorkersOf(primaryPid)];
    peakSum = Math.max(
      peakSum,
      pids.reduce((sum, pid) => sum + residentKb(pid, 'VmRSS'), 0),
    );
    for (const pid of pids) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, residentKb(pid, 'VmHWM')));
  };
  const timer = setInterval(sample, 200);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { peakSumMb: peakSum / 1024, peaksMb: [...peaks.entries()].map(([pid, kb]) => ({ pid, mb: kb / 1024 })) };
    },
  };
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/load needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  const timings: Timed[] = [];
  const failures: string[] = [];
  let sent = 0;
  try {
    const { key, projectId } = await benchProject(db.sql, 'load');
    const call = async (kind: string, method: string, path: string, payload: unknown, gzip = false) => {
      const json = Buffer.from(JSON.stringify(payload));
      const started = performance.now();
      const answer = await request(server.url, key, method, path, gzip ? gzipSync(json) : json, gzip);
      timings.push({ kind, ms: performance.now() - started, status: answer.status });
      if (answer.status < 200 || answer.status >= 300) failures.push(`${kind} ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
      return answer;
    };
    // Every shard's payloads are made before the clock starts: the reporter's own process does that work.
    const shards = Array.from({ length: RUNS * SHARDS_PER_RUN }, (_, n) => {
      const run = Math.floor(n / SHARDS_PER_RUN);
      const shard = (n % SHARDS_PER_RUN) + 1;
      const { tests, attempts } = shardWork(run, shard);
      sent += attempts.flat().length;
      return { run, shard, tests, batches: flushes(attempts), startMs: Math.random() * STAGGER_S * 1000 };
    });
    const memory = watchMemory(server.pid as number);
    const started = performance.now();
    await Promise.all(
      shards.map(async ({ run, shard, tests, batches, startMs }) => {
        await sleep(startMs);
        const joined = await call('report', 'POST', '/api/test-runs/report', { environment: 'load', run_key: `build-${run}`, total_shards: SHARDS_PER_RUN });
        const runId = (JSON.parse(joined.text) as { data: { test_run: { id: number } } }).data.test_run.id;
        await call('begin', 'POST', `/api/test-runs/${runId}/shards/${shard}/begin`, { tests: tests.map((id) => listedTest(id)), complete: false });
        for (const batch of batches) {
          const tick = performance.now();
          if (batch.length > 0) await call('results', 'POST', `/api/test-runs/${runId}/results`, { shard, results: batch }, true);
          await sleep(Math.max(0, FLUSH_MS - (performance.now() - tick)));
        }
        await call('end', 'POST', `/api/test-runs/${runId}/shards/${shard}/end`, { status: 'failed' });
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const { peakSumMb, peaksMb } = memory.stop();

    const [stored] = await db.sql<{ results: number; runs: number; ended: number; counted: number }[]>`
      select (select count(*)::int from test_results t join test_runs r on r.id = t.test_run_id where r.project_id = ${projectId}) as results,
             count(*)::int as runs, count(*) filter (where state in ('passed', 'failed'))::int as ended,
             coalesce(sum(total_count), 0)::int as counted
      from test_runs where project_id = ${projectId}`;
    const lost = sent - (stored?.results ?? 0);
    const results = timings.filter((t) => t.kind === 'results').map((t) => t.ms);
    const all = timings.map((t) => t.ms);
    const p99 = percentile(all, 99);
    const ms = (value: number) => `${value.toFixed(0)} ms`;
    console.log(
      `bench/load: ${shards.length} shards (${SHARDS_PER_RUN} per run) of ${TESTS_PER_SHARD} tests reporting into ${RUNS} runs at once, ` +
        `a batch a second for ${SHARD_S} s each; \`proctor serve\` with its HTTP workers (PostgreSQL)`,
    );
    console.log(
      `  requests       : ${timings.length} in ${seconds.toFixed(1)} s (${(timings.length / seconds).toFixed(0)} a second), ${failures.length} failed`,
    );
    console.log(`  attempts       : ${sent} sent, ${stored?.results} stored (${lost === 0 ? 'none lost or duplicated' : `${lost} missing`})`);
    console.log(
      `  runs           : ${stored?.ended} of ${stored?.runs} ended, counting ${stored?.counted} tests (expected ${RUNS} runs, ${RUNS * SHARDS_PER_RUN * TESTS_PER_SHARD} tests)`,
    );
    console.log(
      `  latency, all   : p50 ${ms(percentile(all, 50))}, p95 ${ms(percentile(all, 95))}, p99 ${ms(p99)} (target p99 under ${P99_TARGET_MS} ms: ${p99 < P99_TARGET_MS ? 'met' : 'NOT met'})`,
    );
    console.log(`  latency, batches: p50 ${ms(percentile(results, 50))}, p99 ${ms(percentile(results, 99))}`);
    console.log(
      `  memory         : peak ${peakSumMb.toFixed(0)} MB for ${peaksMb.length} processes together (each at most ${peaksMb.map((p) => `${p.mb.toFixed(0)}`).join(', ')} MB) ` +
        `(target under ${MEMORY_TARGET_MB} MB: ${peakSumMb < MEMORY_TARGET_MB ? 'met' : 'NOT met'})`,
    );
    for (const failure of failures.slice(0, 5)) console.log(`  failed: ${failure}`);
    // A 500's cause is in the server's log, not in its answer.
    if (failures.length > 0) console.log(`  the server's log:\n${server.output?.().slice(-6000) ?? ''}`);
    const wrong = failures.length > 0 || lost !== 0 || stored?.ended !== RUNS || stored?.counted !== RUNS * SHARDS_PER_RUN * TESTS_PER_SHARD;
    if (wrong) throw new Error('bench/load: requests failed, or results or runs are not as they were sent');
  } finally {
    agent.destroy();
    await server.close();
    await db.close();
  }
}

await main();
