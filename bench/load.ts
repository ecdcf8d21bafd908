// A busy hour, at 1,000 and at 2,000 shards (BENCH_LOAD_SHARDS, comma-separated) reporting at once
// into their runs (bench/load-shards.ts), against `proctor serve` with its HTTP workers as it runs
// by default, and then against a minimal server (bench/minimal-server.mjs: Node's http and
// postgres.js, the same processes and connections, one plain statement per request) under the same
// load. Checked: no request fails, every attempt sent is stored once, every run ends with its counts.
// Printed, with each target met or not: request latency (p99 under 200 ms at 1,000 shards, under
// 500 ms at 2,000), the peak memory of every Proctor process (under 512 MB in all), and Proctor's
// request rate as a share of the minimal server's (at least 70%).
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/process.ts';
import { benchDatabase, benchProject, benchServerProcess, percentile, watchMemory } from './lib.ts';
import { LOAD_SHAPE, type Offered, offerLoad, SHARDS_PER_RUN, TESTS_PER_SHARD } from './load-shards.ts';

const SIZES = (process.env.BENCH_LOAD_SHARDS ?? '1000,2000').split(',').map(Number);
const P99_TARGET_MS = (shards: number) => (shards <= 1000 ? 200 : 500);
const MEMORY_TARGET_MB = 512;
const SHARE_TARGET = 0.7;
/** As `proctor serve` runs by default: an HTTP worker per core (at most 8), sharing PROCTOR_DB_POOL_MAX connections. */
const WORKERS = Math.min(os.availableParallelism(), 8);
const POOL_MAX = Number(process.env.PROCTOR_DB_POOL_MAX ?? 10);

const ms = (value: number) => `${value.toFixed(0)} ms`;
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
const rate = (offered: Offered) => offered.timings.length / offered.seconds;

function printLatency(offered: Offered, target: number | null): void {
  const all = offered.timings.map((t) => t.ms);
  const p99 = percentile(all, 99);
  const targetText = target === null ? '' : ` (target p99 under ${target} ms: ${met(p99 < target)})`;
  console.log(`    latency, all    : p50 ${ms(percentile(all, 50))}, p95 ${ms(percentile(all, 95))}, p99 ${ms(p99)}${targetText}`);
  for (const kind of ['report', 'begin', 'results', 'end'] as const) {
    const of = offered.timings.filter((t) => t.kind === kind).map((t) => t.ms);
    console.log(`    latency, ${kind.padEnd(7)}: p50 ${ms(percentile(of, 50))}, p95 ${ms(percentile(of, 95))}, p99 ${ms(percentile(of, 99))} (${of.length})`);
  }
}

/** Proctor under the load: what it answered, what it stored, how much memory it took. Throws when anything was lost. */
async function loadProctor(shards: number): Promise<Offered> {
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  try {
    const { key, projectId } = await benchProject(db.sql, 'load');
    const memory = watchMemory(server.pid as number);
    const offered = await offerLoad(server.url, key, shards);
    const { peakSumMb, peaksMb } = memory.stop();
    const runs = shards / SHARDS_PER_RUN;
    const [stored] = await db.sql<{ results: number; runs: number; ended: number; counted: number }[]>`
      select (select count(*)::int from test_results t join test_runs r on r.id = t.test_run_id where r.project_id = ${projectId}) as results,
             count(*)::int as runs, count(*) filter (where state in ('passed', 'failed'))::int as ended,
             coalesce(sum(total_count), 0)::int as counted
      from test_runs where project_id = ${projectId}`;
    const lost = offered.sent - (stored?.results ?? 0);
    console.log(`  Proctor (\`proctor serve\`, ${WORKERS} HTTP workers, PostgreSQL):`);
    console.log(
      `    requests        : ${offered.timings.length} in ${offered.seconds.toFixed(1)} s (${rate(offered).toFixed(0)} a second), ${offered.failures.length} failed`,
    );
    console.log(`    attempts        : ${offered.sent} sent, ${stored?.results} stored (${lost === 0 ? 'none lost or duplicated' : `${lost} missing`})`);
    console.log(
      `    runs            : ${stored?.ended} of ${stored?.runs} ended, counting ${stored?.counted} tests (expected ${runs} runs, ${shards * TESTS_PER_SHARD} tests)`,
    );
    printLatency(offered, P99_TARGET_MS(shards));
    console.log(
      `    memory          : peak ${peakSumMb.toFixed(0)} MB for ${peaksMb.length} processes together (each at most ${peaksMb.map((mb) => mb.toFixed(0)).join(', ')} MB) ` +
        `(target under ${MEMORY_TARGET_MB} MB: ${met(peakSumMb < MEMORY_TARGET_MB)})`,
    );
    for (const failure of offered.failures.slice(0, 5)) console.log(`    failed: ${failure}`);
    // A 500's cause is in the server's log, not in its answer.
    if (offered.failures.length > 0) console.log(`  the server's log:\n${server.output?.().slice(-6000) ?? ''}`);
    const wrong = offered.failures.length > 0 || lost !== 0 || stored?.ended !== runs || stored?.counted !== shards * TESTS_PER_SHARD;
    if (wrong) throw new Error('bench/load: requests failed, or results or runs are not as they were sent');
    return offered;
  } finally {
    await server.close();
    await db.close();
  }
}

/** The minimal server under the same load, on a database of its own with the same schema. */
async function loadMinimal(shards: number): Promise<Offered> {
  const db = await benchDatabase();
  const port = await freePort();
  const { projectId, environmentId } = await benchProject(db.sql, 'load');
  const child = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'minimal-server.mjs')], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      PORT: String(port),
      WORKERS: String(WORKERS),
      POOL_MAX: String(POOL_MAX),
      PROJECT_ID: String(projectId),
      ENVIRONMENT_ID: String(environmentId),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
      child.once('exit', (code) => reject(new Error(`the minimal server exited (code ${code})`)));
    });
    const offered = await offerLoad(`http://127.0.0.1:${port}`, 'none', shards);
    console.log(`  the minimal server (Node's http and postgres.js, ${WORKERS} processes, one statement a request):`);
    console.log(
      `    requests        : ${offered.timings.length} in ${offered.seconds.toFixed(1)} s (${rate(offered).toFixed(0)} a second), ${offered.failures.length} failed`,
    );
    printLatency(offered, null);
    return offered;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    await db.close();
  }
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/load needs DATABASE_URL (a PostgreSQL server)');
  for (const shards of SIZES) {
    console.log(`bench/load: ${shards} shards (${LOAD_SHAPE}) into ${shards / SHARDS_PER_RUN} runs at once`);
    const proctor = await loadProctor(shards);
    const minimal = await loadMinimal(shards);
    const share = rate(proctor) / rate(minimal);
    console.log(
      `  Proctor's request rate: ${(100 * share).toFixed(1)}% of the minimal server's (${rate(proctor).toFixed(0)} against ${rate(minimal).toFixed(0)} a second; ` +
        `target at least ${100 * SHARE_TARGET}%: ${met(share >= SHARE_TARGET)})`,
    );
  }
}

await main();
