import type { Tx } from '../db.ts';
import { HttpError } from '../http/errors.ts';
import { snoozedTestIds } from '../snoozes/store.ts';
import { upsertTestCases } from '../testcases/store.ts';
import { completeRun } from './complete.ts';
import type { Attempt, RunState, ShardBegin } from './schema.ts';

const TERMINAL = new Set<RunState>(['passed', 'failed', 'error', 'cancelled']);

interface LockedRun {
  id: number;
  project_id: number;
  environment_id: number;
  state: RunState;
  total_shards: number;
}

/**
 * Locks the run row; results for a finished run are refused so the reporter stops. Result batches
 * take a key-share lock: batches of one run then write side by side (their count updates do not
 * conflict with it), while completion's exclusive lock waits for them and they for it.
 */
async function lockOpenRun(sql: Tx, projectId: number, runId: number, mode: 'exclusive' | 'batch' = 'exclusive'): Promise<LockedRun> {
  const [run] = await sql<LockedRun[]>`
    select id, project_id, environment_id, state, total_shards from test_runs
    where project_id = ${projectId} and id = ${runId} ${mode === 'batch' ? sql`for key share` : sql`for update`}`;
  if (!run) throw new HttpError(404, 'test run not found');
  if (TERMINAL.has(run.state)) throw new HttpError(409, `test run ${runId} is already ${run.state}`);
  return run;
}

/** A shard starts: the run is running, the shard's tests are listed in the run and the inventory. */
export async function beginShard(sql: Tx, projectId: number, runId: number, shard: number, body: ShardBegin, now: Date): Promise<void> {
  const run = await lockOpenRun(sql, projectId, runId);
  if (shard > run.total_shards) throw new HttpError(400, `path.shard: this run has ${run.total_shards} shard(s)`);
  const startedAt = body.started_at ? new Date(body.started_at) : now;
  await sql`
    insert into test_run_shards (test_run_id, shard, complete, started_at) values (${runId}, ${shard}, ${body.complete}, ${startedAt})
    on conflict (test_run_id, shard) do nothing`;
  await sql`
    update test_runs set
      state = 'running',
      run_started_at = coalesce(run_started_at, ${startedAt}),
      test_run_head_sha = coalesce(test_run_head_sha, ${body.commit}),
      last_activity_at = ${now}
    where id = ${runId}`;
  await upsertTestCases(sql, projectId, body.tests, body.commit, now);
  if (body.tests.length === 0) return;
  const rows = body.tests.map((t) => ({ id: t.id, title: t.title, file_path: t.file_path, runner_project: t.runner_project }));
  await sql`
    insert into test_run_tests (test_run_id, test_case_id, project_id, title, file_path, runner_project)
    select ${runId}, x.id, ${projectId}, x.title, x.file_path, x.runner_project
    from jsonb_to_recordset(${sql.json(rows)}) as x(id text, title text, file_path text, runner_project text)
    on conflict (test_run_id, test_case_id) do nothing`;
}

function finalStatus(outcome: NonNullable<Attempt['final']>['outcome']): 'passed' | 'failed' | 'flaky' | 'skipped' {
  switch (outcome) {
    case 'expected':
      return 'passed';
    case 'unexpected':
      return 'failed';
    case 'flaky':
      return 'flaky';
    case 'skipped':
      return 'skipped';
  }
}

/**
 * A batch of attempts in one statement: every attempt inserted, idempotent per (run, test, retry),
 * the final attempts carrying their outcome with snoozes applied as they are recorded, and the
 * run's counts moved by the finals that were new. Returns how many attempts were new.
 */
export async function recordResults(sql: Tx, projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<number> {
  const run = await lockOpenRun(sql, projectId, runId, 'batch');
  const failing = attempts.filter((a) => a.final?.outcome === 'unexpected').map((a) => a.test_id);
  const snoozed = await snoozedTestIds(sql, projectId, run.environment_id, failing, now);
  // Short keys, no null or false fields, times as epoch milliseconds: PostgreSQL's JSON parsing
  // is what ingestion is bound by, and a missing key reads as null.
  const rows = attempts.map((a) => {
    const outcome = a.final ? finalStatus(a.final.outcome) : null;
    const row: Record<string, string | number | boolean> = { i: a.test_id, r: a.retry, s: a.status, d: a.duration };
    if (a.error_message !== null) row.em = a.error_message;
    if (a.error_location !== null) row.el = a.error_location;
    if (a.stdout_tail !== null) row.so = a.stdout_tail;
    if (a.stderr_tail !== null) row.se = a.stderr_tail;
    if (a.started_at !== null) row.t = Date.parse(a.started_at);
    if (a.final) {
      row.f = true;
      row.o = outcome as string;
      if (outcome === 'failed' && snoozed.has(a.test_id)) row.z = true;
      row.td = a.final.total_duration;
      if (a.final.error_message !== null) row.fe = a.final.error_message;
      if (a.final.failure_group_id !== null) row.g = a.final.failure_group_id;
    }
    return row;
  });
  const [result] = await sql<{ recorded: number }[]>`
    with inserted as (
      insert into test_results (test_run_id, test_case_id, retry, shard, status, duration, error_message, error_location,
                                stdout_tail, stderr_tail, started_at, is_final, outcome, snoozed, total_duration,
                                final_error_message, failure_group_id)
      select ${runId}, x.i, x.r, ${shard}, x.s, x.d, x.em, x.el, x.so, x.se, to_timestamp(x.t / 1000.0),
             coalesce(x.f, false), x.o, coalesce(x.z, false), x.td, x.fe, x.g
      from json_to_recordset(${JSON.stringify(rows)}::text::json) as x(i text, r int, s text, d int, em text, el text,
           so text, se text, t float8, f boolean, o text, z boolean, td int, fe text, g text)
      on conflict (test_run_id, test_case_id, retry) do nothing
      returning outcome, snoozed
    ),
    counts as (
      select count(*)::int as recorded,
             count(*) filter (where outcome = 'passed')::int as passed,
             count(*) filter (where outcome = 'failed')::int as failed,
             count(*) filter (where outcome = 'flaky')::int as flaky,
             count(*) filter (where outcome = 'skipped')::int as skipped,
             count(*) filter (where snoozed)::int as snoozed
      from inserted
    ),
    counted as (
      update test_runs set
        success_count = success_count + c.passed, failed_count = failed_count + c.failed, flaky_count = flaky_count + c.flaky,
        skipped_count = skipped_count + c.skipped, snoozed_count = snoozed_count + c.snoozed,
        total_count = total_count + c.passed + c.failed + c.flaky + c.skipped,
        last_activity_at = ${now}
      from counts c
      where id = ${runId}
    )
    select recorded from counts`;
  return result?.recorded ?? 0;
}

export type ShardEndStatus = 'passed' | 'failed' | 'timedout' | 'interrupted' | 'crashed';

/** A shard ends; when it is the last, the run completes. */
export async function endShard(
  sql: Tx,
  projectId: number,
  runId: number,
  shard: number,
  end: { status: ShardEndStatus; errors: string[] },
  now: Date,
): Promise<void> {
  await lockOpenRun(sql, projectId, runId);
  await sql`
    insert into test_run_shards (test_run_id, shard, status, errors, started_at, ended_at)
    values (${runId}, ${shard}, ${end.status}, ${end.errors}, ${now}, ${now})
    on conflict (test_run_id, shard) do update set status = excluded.status, errors = excluded.errors, ended_at = excluded.ended_at
    where test_run_shards.status is null`;
  await sql`update test_runs set last_activity_at = ${now} where id = ${runId}`;
  const [progress] = await sql<{ ended: number; total: number }[]>`
    select count(*) filter (where s.status is not null)::int as ended, r.total_shards as total
    from test_runs r left join test_run_shards s on s.test_run_id = r.id
    where r.id = ${runId} group by r.total_shards`;
  if (progress && progress.ended >= progress.total) await completeRun(sql, runId, now);
}
