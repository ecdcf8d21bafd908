// Analytics at the size of a large project: RESULTS final results (default 10 million) over 90
// days (bench/history.ts). Each endpoint is timed over HTTP (median and p95), and the same question
// answered by a plain aggregate over the raw results, as the baseline. Target: every endpoint under
// 100 ms median at 10 million results. Then, on the same database, bench/dashboard times the
// dashboard's pages and bench/retention deletes the oldest half while results are ingested.
import { benchDashboard } from './dashboard.ts';
import { loadHistory } from './history.ts';
import { analyticsEndpoints, timeGet } from './endpoints.ts';
import { benchDatabase, benchServer } from './lib.ts';
import { benchRetention } from './retention.ts';

const RESULTS = Number(process.env.BENCH_ANALYTICS_RESULTS ?? 10_000_000);
const REQUESTS = Number(process.env.BENCH_ANALYTICS_REQUESTS ?? 20);
const TARGET_MS = 100;

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/analytics needs DATABASE_URL (a PostgreSQL server)');
  const db = await benchDatabase();
  const { sql } = db;
  try {
    const history = await loadHistory(sql, RESULTS, 'bench/analytics');
    const { key, projectId, environmentId, results } = history;

    const server = await benchServer(db);
    const endpoints = analyticsEndpoints(environmentId);
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
        const times = await timeGet(server.url, path, { authorization: `Bearer ${key}` }, REQUESTS);
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
        const med = times.median;
        if (med >= TARGET_MS) allMet = false;
        console.log(`  ${name.padEnd(36)} ${med.toFixed(1).padStart(7)} ms ${times.p95.toFixed(1).padStart(7)} ms | ${baseline}`);
      }
      console.log(`  target: every endpoint under ${TARGET_MS} ms median at ${results.toLocaleString('en')} results: ${allMet ? 'met' : 'NOT met'}`);
      await benchDashboard(server.url, sql, projectId, 'production');
    } finally {
      await server.close();
    }
    await benchRetention(db, history);
  } finally {
    await db.close();
  }
}

await main();
