// A large project's history, loaded the way a dump is restored: RESULTS final results over 90 days,
// 20,000 test cases in 5 runner projects, 3 environments, the table's key and reference added after
// the rows. The rollups are built by the production rebuild (rebuildRollups, equal to rollupRun's
// run-by-run rows: a test holds them so), and the last runs end through rollupRun as they would
// live. bench/analytics times the analytics on it, bench/retention deletes half of it.
import { rebuildRollups } from '../server/src/analytics/rollups.ts';
import { rollupRun } from '../server/src/analytics/rollups-store.ts';
import type { Sql, Tx } from '../server/src/db.ts';
import { afterRunRolledUp } from '../server/src/flaky/index.ts';
import { benchProject, settleWrites } from './lib.ts';

export const TEST_CASES = 20_000;
export const DAYS = 90;
/** Runs that end through rollupRun after the rebuild, as runs end live. */
const LIVE_RUNS = 5;

export interface History {
  projectId: number;
  key: string;
  environmentId: number;
  runIds: number[];
  results: number;
}

const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

export async function loadHistory(sql: Sql, results: number, label: string): Promise<History> {
  const runs = Math.max(1, Math.round(results / TEST_CASES));
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
    from generate_series(0, ${runs - 1}) i
    cross join lateral (
      select date_trunc('day', now()) - (${DAYS - 1}::int - (i * ${DAYS}::int) / ${runs}::int) * interval '1 day' + interval '6 hours'
             + (i % greatest(1, ${runs}::int / ${DAYS}::int)) * interval '5 minutes' as at
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
    if (runIds.length >= 2000 && (from / 25) % 40 === 39) console.log(`  ${(from + 25) * TEST_CASES} results loaded, ${elapsed(loadStarted)}`);
  }
  // As pg_restore would build them: with room to sort in memory rather than in many runs on disk.
  await sql.begin(async (tx) => {
    await tx`set local maintenance_work_mem = '1GB'`;
    await tx`
      alter table test_results add primary key (test_run_id, test_case_id, retry),
        add constraint test_results_test_run_id_fkey foreign key (test_run_id) references test_runs (id) on delete cascade`;
  });
  await sql`analyze test_runs, test_results`;
  console.log(`${label}: loaded ${(runs * TEST_CASES).toLocaleString('en')} results in ${runs} runs in ${elapsed(loadStarted)} (rows, key and reference)`);
  const liveRuns = runIds.slice(-LIVE_RUNS);
  await endRuns(
    sql,
    runIds.filter((id) => !liveRuns.includes(id)),
  );
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
  console.log(
    `  ${liveRuns.length} more runs ended through rollupRun and afterRunRolledUp (flakiness, quarantine): ${((performance.now() - liveStarted) / liveRuns.length).toFixed(0)} ms a run (${TEST_CASES.toLocaleString('en')} tests)`,
  );
  await sql`vacuum analyze`;
  await settleWrites(sql);
  console.log(`  data ready in ${elapsed(started)}`);
  return { projectId, key, environmentId, runIds, results: runs * TEST_CASES };
}

/** Ends the runs with the counts of their results. */
function endRuns(sql: Tx, ids: number[]) {
  return sql`
    update test_runs r set
      total_count = c.total, success_count = c.passed, failed_count = c.failed, flaky_count = c.flaky, skipped_count = c.skipped,
      state = case when c.failed > 0 then 'failed' else 'passed' end
    from (select test_run_id, count(*)::int as total, count(*) filter (where outcome = 'passed')::int as passed,
                 count(*) filter (where outcome = 'failed')::int as failed, count(*) filter (where outcome = 'flaky')::int as flaky,
                 count(*) filter (where outcome = 'skipped')::int as skipped
          from test_results where test_run_id = any(${ids}::int[]) group by test_run_id) c
    where r.id = c.test_run_id`;
}
