// A large organisation's history on one PostgreSQL: RESULTS final results (default 100 million:
// 20,000 tests × 5,000 runs over 90 days, bench/history.ts), loaded in bulk, then on that database:
// every analytics endpoint and the flaky tests (target under 100 ms median, 250 ms p99), a run of
// 20,000 tests as its page and as `GET /api/test-runs/{id}`, two such runs compared (page and API)
// the flaky tests page and an assistant's get_run over MCP (under 200 ms), the run list and the
// test-case list with filters (under 50 ms), and ingestion over HTTP against raw COPY into the same
// table (at least 50%). Every request is a round trip on loopback to `proctor serve` as it runs in
// production, so each time is the server's time and a little more. Runs on request, not in CI: the
// load alone takes most of an hour. `DATABASE_URL=… npx tsx bench/scale.ts`.
import os from 'node:os';
import { signIn, listLatestRunTests, timeMcpGetRun } from './dashboard.ts';
import { analyticsEndpoints, timeGet, type Timed } from './endpoints.ts';
import { loadHistory } from './history.ts';
import { BATCH, compareIngestion } from './ingestion.ts';
import { benchDatabase, benchServerProcess } from './lib.ts';

const RESULTS = Number(process.env.BENCH_SCALE_RESULTS ?? 100_000_000);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 100);
// Ingestion on this machine swings ±10% from one round to the next: the median needs rounds.
const INGEST_ROUNDS = Number(process.env.BENCH_SCALE_INGEST_ROUNDS ?? 9);
const INGEST_BATCHES = 40;
/**
 * Untimed rounds first: a freshly started server's HTTP workers compile their hot paths over the
 * first hundred batches or so (its first rounds run a fifth slower), where a server that has been
 * up a while has long done so.
 */
const INGEST_WARM_ROUNDS = 3;

interface Target {
  medianMs: number;
  p99Ms?: number;
}

let allMet = true;

function report(name: string, timed: Timed, target: Target): void {
  const met = timed.median < target.medianMs && (target.p99Ms === undefined || timed.p99 < target.p99Ms);
  if (!met) allMet = false;
  const wanted = `under ${target.medianMs} ms median${target.p99Ms ? `, ${target.p99Ms} ms p99` : ''}`;
  console.log(
    `  ${name.padEnd(44)} ${timed.median.toFixed(1).padStart(7)} ms ${timed.p99.toFixed(1).padStart(7)} ms ${(timed.bytes / 1024).toFixed(0).padStart(5)} kB  ${wanted}: ${met ? 'met' : 'NOT met'}`,
  );
}

async function machine(sql: Awaited<ReturnType<typeof benchDatabase>>['sql']): Promise<string> {
  const [settings] = await sql<{ version: string; shared_buffers: string; work_mem: string }[]>`
    select current_setting('server_version') as version, current_setting('shared_buffers') as shared_buffers, current_setting('work_mem') as work_mem`;
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.availableParallelism()} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; PostgreSQL ${settings?.version} on the same machine (shared_buffers ${settings?.shared_buffers}, work_mem ${settings?.work_mem})`;
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/scale needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  const { sql } = db;
  try {
    console.log(`bench/scale, ${new Date().toISOString().slice(0, 10)}: ${await machine(sql)}`);
    const history = await loadHistory(sql, RESULTS, 'bench/scale');
    const { key, projectId, environmentId } = history;
    const [size] = await sql<{ size: string }[]>`select pg_size_pretty(pg_database_size(current_database())) as size`;
    console.log(`  database: ${size?.size}`);
    // The run page's run: the latest of the history, with its 20,000 tests listed.
    const runId = await listLatestRunTests(sql, projectId);
    const server = await benchServerProcess(db);
    try {
      const ingestion = await compareIngestion(
        db,
        server,
        { key, projectId, environmentId, environmentSlug: 'production' },
        INGEST_BATCHES,
        INGEST_ROUNDS,
        INGEST_WARM_ROUNDS,
      );
      const ratio = ingestion.http / ingestion.copy;
      if (ratio < 0.5) allMet = false;
      const fmt = (rate: number) => Math.round(rate).toLocaleString('en');
      console.log(
        `  ingestion into the table of ${history.results.toLocaleString('en')} results, ${BATCH * INGEST_BATCHES} a round in batches of ${BATCH}, ${INGEST_ROUNDS} rounds after ${INGEST_WARM_ROUNDS} untimed: ` +
          `HTTP ${fmt(ingestion.http)} results/s (${ingestion.httpRates.map(fmt).join(', ')}), COPY ${fmt(ingestion.copy)} rows/s (${ingestion.copyRates.map(fmt).join(', ')}): ` +
          `${(ratio * 100).toFixed(1)}% of COPY (target 50%: ${ratio >= 0.5 ? 'met' : 'NOT met'})`,
      );
      const api = { authorization: `Bearer ${key}` };
      const cookie = { cookie: await signIn(server.url, sql, projectId) };
      console.log(`  over HTTP, ${REQUESTS} requests each                   median     p99    size`);
      for (const [name, path] of analyticsEndpoints(environmentId)) {
        report(name, await timeGet(server.url, path, api, REQUESTS), { medianMs: 100, p99Ms: 250 });
      }
      report('run page, 20,000 tests', await timeGet(server.url, `/projects/${projectId}/runs/${runId}`, cookie, REQUESTS), { medianMs: 200 });
      report('GET /api/test-runs/{id}, 20,000 tests', await timeGet(server.url, `/api/test-runs/${runId}`, api, REQUESTS), { medianMs: 200 });
      const [previous] = await sql<{ id: number }[]>`select id from test_runs where project_id = ${projectId} and id < ${runId} order by id desc limit 1`;
      const compared = `${runId}/compare/${previous?.id}`;
      report('GET /api/test-runs/{id}/compare/{other}, 20,000 tests', await timeGet(server.url, `/api/test-runs/${compared}`, api, REQUESTS), {
        medianMs: 200,
      });
      report('two runs compared (page), 20,000 tests', await timeGet(server.url, `/projects/${projectId}/runs/${compared}`, cookie, REQUESTS), {
        medianMs: 200,
      });
      report('flaky tests page', await timeGet(server.url, `/projects/${projectId}/flaky-tests`, cookie, REQUESTS), { medianMs: 200 });
      report('MCP get_run, 20,000 tests', await timeMcpGetRun(server.url, key, runId, REQUESTS), { medianMs: 200 });
      const lists: [string, string][] = [
        ['run list', '/api/test-runs?per_page=50'],
        ['run list, environment and state', '/api/test-runs?environment=production&state=failed&per_page=50'],
        ['run list, page 50', '/api/test-runs?per_page=50&page=50'],
        ['test cases, file path and runner project', `/api/test-cases/v2?project_id=${projectId}&file_path=tests/area7/&runner_project=project-2`],
        ['test cases, tag', `/api/test-cases/v2?project_id=${projectId}&tags=@smoke&per_page=100`],
        ['test cases, searched', `/api/test-cases/v2?project_id=${projectId}&search=file123`],
        ['test cases, page 100', `/api/test-cases/v2?project_id=${projectId}&page=100`],
      ];
      for (const [name, path] of lists) report(name, await timeGet(server.url, path, api, REQUESTS), { medianMs: 50 });

      console.log(`  every target: ${allMet ? 'met' : 'NOT met'}`);
    } finally {
      await server.close();
    }
  } finally {
    await db.close();
  }
}

await main();
