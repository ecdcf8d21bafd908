// Completion of a large run at each size in BENCH_COMPLETE_TESTS (default 4,000 and 20,000; 100,000
// on request), in its two parts: the transaction that ends the run, inside the shard's end request
// (counts, state, the inventory, its rollup queued), and the job that writes its rollup right after
// (daily rollups, the running totals). Each size has a project of its own and four runs whose
// results are written just before they end, as a reporter's are (no fresh statistics): the first
// run of a day before, the next day's first run (its snapshot carried forward), a second run that
// day, and a run of the day before reported late (every later snapshot moves). The baseline,
// measured in the same run, is writing the run's results with one INSERT … SELECT. Targets: every
// ending under 2 s at 100,000 tests, and both parts linear: from one size to the next, the time
// grows as the size does. The rollup has no target of its own: it holds one connection of the
// server that runs it, one run at a time.
import { rollUpNext } from '../server/src/analytics/index.ts';
import { finishRun } from '../server/src/runs/finish.ts';
import type { Sql } from '../server/src/db.ts';
import { benchDatabase, benchProject, settleWrites } from './lib.ts';

const SIZES = (process.env.BENCH_COMPLETE_TESTS ?? '4000,20000').split(',').map(Number);
const TARGET_MS_AT_100K = 2000;
const DAY_MS = 86_400_000;

interface Timing {
  scenario: string;
  insertMs: number;
  completeMs: number;
  rollupMs: number;
}

/** A running run with `tests` final results (2% failed, 2% flaky, 2% skipped), started at `startedAt`. */
async function reportedRun(sql: Sql, projectId: number, environmentId: number, tests: number, startedAt: Date): Promise<{ runId: number; insertMs: number }> {
  const [run] = await sql<{ id: number }[]>`
    insert into test_runs (project_id, environment_id, state, origin, total_shards, created_at, run_started_at)
    values (${projectId}, ${environmentId}, 'running', 'reporter', 1, ${startedAt}, ${startedAt}) returning id`;
  const runId = (run as { id: number }).id;
  await sql`insert into test_run_shards (test_run_id, shard, status, complete, ended_at) values (${runId}, 1, 'failed', true, ${startedAt})`;
  await sql`
    insert into test_run_tests (test_run_id, test_case_id, project_id, title, file_path, runner_project)
    select ${runId}, lpad(to_hex(g), 20, '0') || '-' || repeat('a', 20), ${projectId}, 'test ' || g, 'tests/file' || (g / 20) || '.spec.ts', 'chromium'
    from generate_series(1, ${tests}) g`;
  const started = performance.now();
  await sql`
    insert into test_results (test_run_id, test_case_id, retry, shard, status, duration, is_final, outcome, total_duration)
    select ${runId}, lpad(to_hex(g), 20, '0') || '-' || repeat('a', 20), 0, 1,
           case when g % 50 = 0 then 'failed' when g % 50 = 2 then 'skipped' else 'passed' end, 100, true,
           case when g % 50 = 0 then 'failed' when g % 50 = 1 then 'flaky' when g % 50 = 2 then 'skipped' else 'passed' end, 100
    from generate_series(1, ${tests}) g`;
  return { runId, insertMs: performance.now() - started };
}

/** The run's end, as the last shard's end request makes it, then its rollup, as the job writes it. */
async function timeCompletion(sql: Sql, runId: number, now: Date): Promise<{ completeMs: number; rollupMs: number }> {
  const started = performance.now();
  await sql.begin(async (tx) => {
    if (process.env.PROBE) await tx`set local log_min_duration_statement = 10`;
    await finishRun(tx, runId, { kind: 'reported' }, now);
  });
  const ended = performance.now();
  if (!(await rollUpNext(sql, () => new Date()))) throw new Error(`run ${runId} was not queued for its rollup`);
  return { completeMs: ended - started, rollupMs: performance.now() - ended };
}

async function benchSize(sql: Sql, tests: number): Promise<Timing[]> {
  const { projectId, environmentId } = await benchProject(sql, `size-${tests}`);
  await sql`
    insert into test_cases (project_id, id, name, file_path, suites, runner_project, tags, line, "column")
    select ${projectId}, lpad(to_hex(g), 20, '0') || '-' || repeat('a', 20), 'test ' || g, 'tests/file' || (g / 20) || '.spec.ts', '{}', 'chromium', '{}', 1, 1
    from generate_series(1, ${tests}) g`;
  const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + 6 * 3_600_000);
  const yesterday = new Date(today.getTime() - DAY_MS);
  const scenarios: [string, Date][] = [
    ['first run, the day before', yesterday],
    ["next day's first run (snapshot carried)", today],
    ['second run of the day', new Date(today.getTime() + 600_000)],
    ['the day before, reported late', new Date(yesterday.getTime() + 600_000)],
  ];
  const timings: Timing[] = [];
  for (const [scenario, startedAt] of scenarios) {
    const { runId, insertMs } = await reportedRun(sql, projectId, environmentId, tests, startedAt);
    timings.push({ scenario, insertMs, ...(await timeCompletion(sql, runId, new Date(startedAt.getTime() + 60_000))) });
  }
  return timings;
}

type Part = 'completeMs' | 'rollupMs';

/** Whether each step from one size to the next grows the slowest `part` at most 1.5 times as much as the size. */
function reportGrowth(worst: Map<number, Record<Part, number>>, part: Part, name: string): boolean {
  let linear = true;
  const sizes = [...worst.keys()];
  for (let i = 1; i < sizes.length; i++) {
    const [small, large] = [sizes[i - 1] as number, sizes[i] as number];
    const growth = (worst.get(large) as Record<Part, number>)[part] / (worst.get(small) as Record<Part, number>)[part];
    const step = growth <= (large / small) * 1.5;
    linear &&= step;
    console.log(
      `  ${small} → ${large} tests: the slowest ${name} grew ${growth.toFixed(1)}× for ${(large / small).toFixed(1)}× the tests (${step ? 'linear' : 'NOT linear'})`,
    );
  }
  return linear;
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  try {
    await settleWrites(db.sql);
    const worst = new Map<number, Record<Part, number>>();
    for (const tests of SIZES) {
      console.log(`\nbench/complete: ${tests.toLocaleString('en')} tests`);
      for (const t of await benchSize(db.sql, tests)) {
        console.log(
          `  ${t.scenario.padEnd(42)} ending ${t.completeMs.toFixed(0).padStart(6)} ms   rollup (job) ${t.rollupMs.toFixed(0).padStart(6)} ms   baseline (insert the results) ${t.insertMs.toFixed(0).padStart(6)} ms   ratios ${(t.completeMs / t.insertMs).toFixed(2)}, ${(t.rollupMs / t.insertMs).toFixed(2)}`,
        );
        const seen = worst.get(tests) ?? { completeMs: 0, rollupMs: 0 };
        worst.set(tests, { completeMs: Math.max(seen.completeMs, t.completeMs), rollupMs: Math.max(seen.rollupMs, t.rollupMs) });
      }
    }
    const sizes = [...worst.keys()];
    if (sizes.length > 1) {
      const linear = reportGrowth(worst, 'completeMs', 'ending') && reportGrowth(worst, 'rollupMs', 'rollup');
      console.log(`  linear in the run's size: ${linear ? 'met' : 'NOT met'}`);
    }
    const largest = sizes[sizes.length - 1] as number;
    const scale = (ms: number) => ((ms * 100_000) / largest).toFixed(0);
    const slowest = worst.get(largest) as Record<Part, number>;
    const atTarget = (slowest.completeMs * 100_000) / largest;
    const how = largest === 100_000 ? 'measured' : `projected linearly from ${largest.toLocaleString('en')}`;
    console.log(
      `  the slowest ending at 100,000 tests: ${scale(slowest.completeMs)} ms ${how} (target < ${TARGET_MS_AT_100K} ms: ${atTarget < TARGET_MS_AT_100K ? 'met' : 'NOT met'})`,
    );
    console.log(`  the slowest rollup at 100,000 tests, written by the job after the ending: ${scale(slowest.rollupMs)} ms ${how}`);
  } finally {
    await db.close();
  }
}

await main();
