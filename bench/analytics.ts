// Analytics at the size of a large project: RESULTS final results (default 10 million) over 90
// days, 20,000 test cases in 5 runner projects, 3 environments. The results are loaded the way a
// dump is restored (the table's key and reference added after the rows); the rollups are built by
// the production rebuild (rebuildRollups, equal to rollupRun's run-by-run rows: a test holds them
// so), and the last runs end through rollupRun as they would live. Then each endpoint is timed over
// HTTP (median and p95), and the same question answered by a plain aggregate over the raw results,
// as the baseline. Target: every endpoint under 100 ms median at 10 million results.
import { rebuildRollups } from '../server/src/analytics/rollups.ts';
import { afterRunRolledUp } from '../server/src/flaky/index.ts';
import { benchDashboard } from './dashboard.ts';
import { rollupRun } from '../server/src/analytics/rollups.ts';
import type { Tx } from '../server/src/db.ts';
import { benchDatabase, benchProject, benchServer, median, percentile, settleWrites } from './lib.ts';

const RESULTS = Number(process.env.BENCH_ANALYTICS_RESULTS ?? 10_000_000);
const TEST_CASES = 20_000;
const RUNS = Math.max(1, Math.round(RESULTS / TEST_CASES));
const DAYS = 90;
const REQUESTS = Number(process.env.BENCH_ANALYTICS_REQUESTS ?? 20);
/** Runs that end through rollupRun after the rebuild, as runs end live. */
const LIVE_RUNS = 5;
const TARGET_MS = 100;

const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/analytics needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  const { sql } = db;
  try {
    const started = performance.now();
    const { key, projectId, environmentId } = await benchProject(sql, 'production');
    const [staging] = await sql<{ id: number }[]>`insert into environments (project_id, slug, name) values (${projectId}, 'staging', 'Staging') returning id`;
    const [preview] = await sql<{ id: number }[]>`insert into environments (project_id, slug, name) values (${projectId}, 'preview', 'Preview') returning id`;
    const environments = [environmentId, staging?.id as number, preview?.id as number];

    await sql`
      insert into test_cases (project_id, id, name, file_path, suites, runner_project, tags, line, "column")
      select ${projectId}, lpad(to_hex(g / 5), 20, '0') || '-' || lpad(to_hex(g % 5), 20, '0'), 'test ' || (g / 5),
             'tests/area' || (g / 200) || '/file' || (g / 25) || '.spec.ts', '{}', 'project-' || (g % 5),
             case when g % 10 = 0 then '{@smoke}'::text[] else '{}'::text[] end, 1, 1
      from generate_series(0, ${TEST_CASES - 1}) g`;
    // Runs in time order, as they arrive: the oldest day first, each day's runs a few minutes apart.
    await sql`
      insert into test_runs (project_id, environment_id, state, origin, total_shards, created_at, run_started_at, run_ended_at, duration)
      select ${projectId}, (${environments}::int[])[1 + i % 3], 'running', 'reporter', 1, at, at, at + interval '20 minutes', 1200000
      from generate_series(0, ${RUNS - 1}) i
      cross join lateral (
        select date_trunc('day', now()) - (${DAYS - 1}::int - (i * ${DAYS}::int) / ${RUNS}::int) * interval '1 day' + interval '6 hours'
               + (i % greatest(1, ${RUNS}::int / ${DAYS}::int)) * interval '5 minutes' as at
      ) t`;
    const runIds = (await sql<{ id: number }[]>`select id from test_runs where project_id = ${projectId} order by id`).map((r) => r.id);
    const loadStarted = performance.now();
    await sql`alter table test_results drop constraint test_results_test_run_id_fkey, drop constraint test_results_pkey`;
    for (let from = 0; from < runIds.length; from += 25) {
      const chunk = runIds.slice(from, from + 25);
      // 2% failed, 2% flaky, 2% skipped, the rest passed; the same for a test and run every time.
      await sql`
        insert into test_results (test_run_id, test_case_id, retry, shard, status, duration, is_final, outcome, total_duration)
        select r.id, tc.id, case when o.k < 40 and o.k >= 20 then 1 else 0 end, 1,
               case when o.k < 20 then 'failed' when o.k < 60 and o.k >= 40 then 'skipped' else 'passed' end,
               100 + o.k, true,
               case when o.k < 20 then 'failed' when o.k < 40 then 'flaky' when o.k < 60 then 'skipped' else 'passed' end,
               100 + o.k
        from unnest(${chunk}::int[]) as r(id)
        cross join test_cases tc
        cross join lateral (select abs(hashint4(r.id * 31 + hashtext(tc.id))) % 1000 as k) o
        where tc.project_id = ${projectId}`;
    }
    await sql`
      alter table test_results add primary key (test_run_id, test_case_id, retry),
        add constraint test_results_test_run_id_fkey foreign key (test_run_id) references test_runs (id) on delete cascade`;
    await sql`analyze test_runs, test_results`;
    console.log(`bench/analytics: loaded ${(RUNS * TEST_CASES).toLocaleString('en')} results in ${RUNS} runs in ${elapsed(loadStarted)}`);
    const liveRuns = runIds.slice(-LIVE_RUNS);
    const endRuns = (db: Tx, ids: number[]) => db`
      update test_runs r set
        total_count = c.total, success_count = c.passed, failed_count = c.failed, flaky_count = c.flaky, skipped_count = c.skipped,
        state = case when c.failed > 0 then 'failed' else 'passed' end
      from (select test_run_id, count(*)::int as total, count(*) filter (where outcome = 'passed')::int as passed,
                   count(*) filter (where outcome = 'failed')::int as failed, count(*) filter (where outcome = 'flaky')::int as flaky,
                   count(*) filter (where outcome = 'skipped')::int as skipped
            from test_results where test_run_id = any(${ids}::int[]) group by test_run_id) c
      where r.id = c.test_run_id`;
    await endRuns(sql, runIds.filter((id) => !liveRuns.includes(id)));
    const rebuildStarted = performance.now();
    await rebuildRollups(sql, projectId);
    console.log(`  rollups of ${runIds.length - liveRuns.length} runs by rebuildRollups: ${elapsed(rebuildStarted)}`);
    const liveStarted = performance.now();
    for (const runId of liveRuns) {
      await sql.begin(async (tx) => {
        await endRuns(tx, [runId]);
        await rollupRun(tx, runId);
        await afterRunRolledUp(tx, runId, new Date());
      });
    }
    console.log(`  ${liveRuns.length} more runs ended through rollupRun and afterRunRolledUp (flakiness, quarantine): ${((performance.now() - liveStarted) / liveRuns.length).toFixed(0)} ms a run (${TEST_CASES.toLocaleString('en')} tests)`);
    await sql`vacuum analyze`;
    await settleWrites(sql);
    console.log(`  data ready in ${elapsed(started)}`);

    const server = await benchServer(db);
    const singleCase = `${'0'.repeat(17)}${(1234).toString(16)}-${'0'.repeat(19)}2`;
    const endpoints: [string, string][] = [
      ['test-runs days=7', '/api/v1/analytics/test-runs?days=7'],
      ['test-runs days=90', '/api/v1/analytics/test-runs?days=90'],
      ['test-counts days=7', '/api/v1/analytics/test-counts?days=7'],
      ['test-counts days=90', '/api/v1/analytics/test-counts?days=90'],
      ['test-cases days=7', '/api/v1/analytics/test-cases?days=7&order_by=fail_rate'],
      ['test-cases days=90', '/api/v1/analytics/test-cases?days=90&order_by=fail_rate'],
      ['single-case history days=90', `/api/v1/analytics/test-cases?days=90&test_case_id=${singleCase}&limit_history=100`],
      ['flaky-tests (14 days, every environment)', '/api/flaky-tests?per_page=50'],
      ['flaky-tests (14 days, one environment)', `/api/flaky-tests?environment_id=${environmentId}&per_page=50`],
      ['flaky-tests class=broken', `/api/flaky-tests?environment_id=${environmentId}&class=broken`],
    ];
    const baselines: Record<string, () => Promise<unknown>> = {
      'test-runs': (days = 7) => sql`
        select (coalesce(r.run_started_at, r.created_at))::date as day, count(distinct r.id), count(*) filter (where t.outcome = 'passed')
        from test_runs r join test_results t on t.test_run_id = r.id and t.is_final
        where r.project_id = ${projectId} and r.created_at >= now() - (${days} || ' days')::interval group by 1`,
      'test-counts': (days = 7) => sql`
        select (coalesce(r.run_started_at, r.created_at))::date as day, count(distinct t.test_case_id)
        from test_runs r join test_results t on t.test_run_id = r.id and t.is_final and t.outcome <> 'skipped'
        where r.project_id = ${projectId} and r.created_at >= now() - (${days} || ' days')::interval group by 1`,
      'test-cases': (days = 7) => sql`
        select t.test_case_id, count(*) filter (where t.outcome <> 'skipped'), count(*) filter (where t.outcome = 'failed')
        from test_runs r join test_results t on t.test_run_id = r.id and t.is_final
        where r.project_id = ${projectId} and r.created_at >= now() - (${days} || ' days')::interval
        group by 1 order by 3 desc limit 100`,
      'flaky-tests': () => sql`
        select r.environment_id, t.test_case_id, count(*), count(*) filter (where t.outcome = 'flaky')
        from test_runs r join test_results t on t.test_run_id = r.id and t.is_final and t.outcome <> 'skipped'
        where r.project_id = ${projectId} and r.created_at >= now() - interval '14 days'
        group by 1, 2 order by 4 desc limit 50`,
    };
    let allMet = true;
    try {
      console.log(`  endpoint over HTTP (${REQUESTS} requests)        median     p95   | plain aggregate over raw results`);
      for (const [name, path] of endpoints) {
        for (let i = 0; i < 3; i++) await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        const times: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const t0 = performance.now();
          const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
          await response.arrayBuffer();
          times.push(performance.now() - t0);
          if (!response.ok) throw new Error(`${path} answered ${response.status}`);
        }
        const kind = name.split(' ')[0] as string;
        const days = Number(/days=(\d+)/.exec(path)?.[1] ?? (kind === 'flaky-tests' ? 14 : 7));
        let baseline = '';
        // The 90-day aggregates take half a minute between them: BENCH_ANALYTICS_BASELINES=all runs them too.
        const wanted = days <= 14 || process.env.BENCH_ANALYTICS_BASELINES === 'all';
        if (baselines[kind] && !name.startsWith('single') && wanted) {
          const t0 = performance.now();
          await (baselines[kind] as (days: number) => Promise<unknown>)(days);
          baseline = `${(performance.now() - t0).toFixed(0)} ms`;
        }
        const med = median(times);
        if (med >= TARGET_MS) allMet = false;
        console.log(`  ${name.padEnd(36)} ${med.toFixed(1).padStart(7)} ms ${percentile(times, 95).toFixed(1).padStart(7)} ms | ${baseline}`);
      }
      console.log(`  target: every endpoint under ${TARGET_MS} ms median at ${(RUNS * TEST_CASES).toLocaleString('en')} results: ${allMet ? 'met' : 'NOT met'}`);
      await benchDashboard(server.url, sql, projectId, 'production');
    } finally {
      await server.close();
    }
  } finally {
    await db.close();
  }
}

await main();
