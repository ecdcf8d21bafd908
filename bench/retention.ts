// The retention pass deleting the oldest half of a large project's history (bench/history.ts: 10
// million results over 90 days; `proctor retention run` with results_days 45) while results are
// ingested over HTTP (`proctor serve` with its HTTP workers, the reporter's client: gzip, batches
// of 500, two in flight). Ingestion is timed in bursts before, during and after the deletion, in
// the same run. Target: ingestion during the deletion at least 70% of its rate without it. The
// deletion's rate is printed. Run alone with `npx tsx bench/retention.ts`; CI runs it from
// bench/analytics, on the history that bench loaded.
import { gzipSync } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { postGzipped, postJson } from '../reporter/src/api/transport.ts';
import { attempt } from '../test/helpers/attempts.ts';
import { spawnProctor } from '../test/helpers/process.ts';
import { type History, loadHistory } from './history.ts';
import { type BenchDatabase, benchDatabase, benchServerProcess, median, testIdOf } from './lib.ts';

const BATCH = 500;
/** A burst's batches: 20,000 results, as a large suite's shard sends them. */
const BURST_BATCHES = 40;
const IN_FLIGHT = 2;
const BURSTS_WITHOUT = Number(process.env.BENCH_RETENTION_BURSTS ?? 5);
/** Between two bursts during the deletion, so that the run of bursts samples all of it. */
const GAP_MS = 250;
const TARGET = 0.7;
const KEEP_DAYS = 45;

type Transport = { url: string; apiKey: string; projectId: null; maxAttempts: number; maxBackoffMs: number };

function burstPayloads(): { listed: object[]; payloads: Buffer[] } {
  const total = BATCH * BURST_BATCHES;
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
  const startedAt = new Date().toISOString();
  const payloads = Array.from({ length: BURST_BATCHES }, (_, b) => {
    const results = Array.from({ length: BATCH }, (_, i) => {
      const n = b * BATCH + i;
      const failed = n % 10 === 0;
      return attempt(testIdOf(n), {
        final: failed ? 'unexpected' : 'expected',
        duration: 100 + (n % 900),
        error_message: failed ? `Error: expect(received).toBe(expected)\n\nExpected: ${n}\nReceived: ${n + 1}` : null,
        started_at: startedAt,
      });
    });
    return gzipSync(JSON.stringify({ shard: 1, results }));
  });
  return { listed, payloads };
}

/** One run's worth of results, IN_FLIGHT batches under way at once; results per second of the posting alone. */
async function burst(transport: Transport, work: ReturnType<typeof burstPayloads>): Promise<number> {
  const runId = (await postJson<{ data: { test_run: { id: number } } }>(transport, '/api/test-runs/report', { environment: 'production' })).data.test_run.id;
  for (let from = 0; from < work.listed.length; from += 5000) {
    await postJson(transport, `/api/test-runs/${runId}/shards/1/begin`, { tests: work.listed.slice(from, from + 5000), complete: false });
  }
  const queue = [...work.payloads];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let payload = queue.shift(); payload; payload = queue.shift()) await postGzipped(transport, `/api/test-runs/${runId}/results`, payload);
    }),
  );
  // Left running, as bench/ingest leaves its runs: an end would add its rollup's work to the next burst's timing.
  return (BATCH * BURST_BATCHES) / ((performance.now() - started) / 1000);
}

async function resultsOf(db: BenchDatabase, projectId: number): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::float8 as n from test_results t join test_runs r on r.id = t.test_run_id where r.project_id = ${projectId}`;
  return row?.n ?? 0;
}

export async function benchRetention(db: BenchDatabase, history: History): Promise<void> {
  // The server's own pass must not start the deletion: the command line does, timed.
  const server = await benchServerProcess(db, { PROCTOR_RETENTION_RESULTS_DAYS: '36500', PROCTOR_RETENTION_ARTIFACTS_DAYS: '36500' });
  try {
    const transport: Transport = { url: server.url, apiKey: history.key, projectId: null, maxAttempts: 1, maxBackoffMs: 0 };
    const work = burstPayloads();
    await burst(transport, work);
    const before: number[] = [];
    for (let i = 0; i < BURSTS_WITHOUT; i++) before.push(await burst(transport, work));

    const heldBefore = await resultsOf(db, history.projectId);
    const policy = await fetch(`${server.url}/api/retention-policy`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${history.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ results_days: KEEP_DAYS, artifacts_days: KEEP_DAYS }),
    });
    if (!policy.ok) throw new Error(`PUT /api/retention-policy: ${policy.status} ${await policy.text()}`);
    const deletion = spawnProctor(['retention', 'run', '--project', String(history.projectId)], { DATABASE_URL: db.url, LOG_LEVEL: 'warn' });
    let deleting = true;
    const deletionStarted = performance.now();
    const deleted = deletion.exited.then((code) => {
      deleting = false;
      if (code !== 0) throw new Error(`proctor retention run exited ${code}: ${deletion.output()}`);
      return (performance.now() - deletionStarted) / 1000;
    });
    const during: number[] = [];
    while (deleting) {
      const rate = await burst(transport, work);
      // A burst that ended after the deletion did ran partly without it.
      if (deleting) during.push(rate);
      await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    }
    const deletionSeconds = await deleted;
    const after: number[] = [];
    for (let i = 0; i < BURSTS_WITHOUT; i++) after.push(await burst(transport, work));

    const removed = Number(/\((\d+) results\)/.exec(deletion.output())?.[1] ?? Number.NaN);
    const [left] = await db.sql<{ runs: number; results: number }[]>`
      select count(*)::int as runs, coalesce(sum((select count(*) from test_results t where t.test_run_id = r.id)), 0)::float8 as results
      from test_runs r
      where r.project_id = ${history.projectId} and r.run_ended_at < now() - ${KEEP_DAYS} * interval '1 day' and not r.pinned`;
    if (left?.results !== 0) throw new Error(`${left?.results} results of expired runs are left`);
    const baseline = median([...before, ...after]);
    const withDeletion = median(during);
    const ratio = withDeletion / baseline;
    const fmt = (rate: number) => Math.round(rate).toLocaleString('en');
    console.log(
      `bench/retention: the oldest ${90 - KEEP_DAYS} of 90 days deleted by \`proctor retention run\` while results are ingested ` +
        `(bursts of ${BATCH * BURST_BATCHES} results in batches of ${BATCH}, ${IN_FLIGHT} in flight)`,
    );
    console.log(
      `  deleted        : ${removed.toLocaleString('en')} of ${heldBefore.toLocaleString('en')} results (${left.runs} runs) in ${deletionSeconds.toFixed(1)} s: ${fmt(removed / deletionSeconds)} results/s`,
    );
    console.log(
      `  ingestion      : median ${fmt(baseline)} results/s without the deletion (before: ${before.map(fmt).join(', ')}; after: ${after.map(fmt).join(', ')})`,
    );
    console.log(`  during deletion: median ${fmt(withDeletion)} results/s over ${during.length} bursts (${during.map(fmt).join(', ')})`);
    console.log(`  ratio          : ${(ratio * 100).toFixed(1)}% of the rate without it (target ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`);
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/retention needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  try {
    await benchRetention(db, await loadHistory(db.sql, Number(process.env.BENCH_RETENTION_RESULTS ?? 10_000_000), 'bench/retention'));
  } finally {
    await db.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
