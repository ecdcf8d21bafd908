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

/** Locks the run row for the batch; results for a finished run are refused so the reporter stops. */
async function lockOpenRun(sql: Tx, projectId: number, runId: number): Promise<LockedRun> {
  const [run] = await sql<LockedRun[]>`
    select id, project_id, environment_id, state, total_shards from test_runs
    where project_id = ${projectId} and id = ${runId} for update`;
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
 * A batch of attempts: every attempt in one statement, idempotent per (run, test, retry); the
 * final outcomes in one more, with snoozes applied as they are recorded; the run's counts in one.
 */
export async function recordResults(sql: Tx, projectId: number, runId: number, shard: number, attempts: Attempt[], now: Date): Promise<number> {
  const run = await lockOpenRun(sql, projectId, runId);
  const attemptRows = attempts.map((a) => ({
    test_case_id: a.test_id,
    retry: a.retry,
    status: a.status,
    duration: a.duration,
    error_message: a.error_message,
    error_location: a.error_location,
    stdout_tail: a.stdout_tail,
    stderr_tail: a.stderr_tail,
    started_at: a.started_at,
  }));
  const inserted = await sql`
    insert into test_results (test_run_id, test_case_id, retry, shard, status, duration, error_message, error_location,
                              stdout_tail, stderr_tail, started_at)
    select ${runId}, x.test_case_id, x.retry, ${shard}, x.status, x.duration, x.error_message, x.error_location,
           x.stdout_tail, x.stderr_tail, x.started_at
    from jsonb_to_recordset(${sql.json(attemptRows)}) as x(test_case_id text, retry int, status text, duration int,
         error_message text, error_location text, stdout_tail text, stderr_tail text, started_at timestamptz)
    on conflict (test_run_id, test_case_id, retry) do nothing
    returning 1`;

  const finals = attempts.filter((a) => a.final !== null);
  if (finals.length > 0) {
    const failing = finals.filter((a) => a.final?.outcome === 'unexpected').map((a) => a.test_id);
    const snoozed = await snoozedTestIds(sql, projectId, run.environment_id, failing, now);
    const finalRows = finals.map((a) => {
      const final = a.final as NonNullable<Attempt['final']>;
      const status = finalStatus(final.outcome);
      return {
        id: a.test_id,
        title: final.title,
        file_path: final.file_path,
        runner_project: final.runner_project,
        status,
        snoozed: status === 'failed' && snoozed.has(a.test_id),
        duration: final.total_duration,
        retries: a.retry,
        error_message: final.error_message,
        failure_group_id: final.failure_group_id,
      };
    });
    const [counts] = await sql<{ passed: number; failed: number; flaky: number; skipped: number; snoozed: number }[]>`
      with finalised as (
        insert into test_run_tests as t (test_run_id, test_case_id, project_id, title, file_path, runner_project, status,
                                         snoozed, duration, retries, error_message, failure_group_id, ended_at)
        select ${runId}, x.id, ${projectId}, x.title, x.file_path, x.runner_project, x.status, x.snoozed, x.duration,
               x.retries, x.error_message, x.failure_group_id, ${now}
        from jsonb_to_recordset(${sql.json(finalRows)}) as x(id text, title text, file_path text, runner_project text,
             status text, snoozed boolean, duration int, retries int, error_message text, failure_group_id text)
        on conflict (test_run_id, test_case_id) do update set
          status = excluded.status, snoozed = excluded.snoozed, duration = excluded.duration, retries = excluded.retries,
          error_message = excluded.error_message, failure_group_id = excluded.failure_group_id, ended_at = excluded.ended_at
        where t.status is null
        returning t.status, t.snoozed
      )
      select count(*) filter (where status = 'passed')::int as passed,
             count(*) filter (where status = 'failed')::int as failed,
             count(*) filter (where status = 'flaky')::int as flaky,
             count(*) filter (where status = 'skipped')::int as skipped,
             count(*) filter (where snoozed)::int as snoozed
      from finalised`;
    const c = counts as NonNullable<typeof counts>;
    await sql`
      update test_runs set
        success_count = success_count + ${c.passed},
        failed_count = failed_count + ${c.failed},
        flaky_count = flaky_count + ${c.flaky},
        skipped_count = skipped_count + ${c.skipped},
        snoozed_count = snoozed_count + ${c.snoozed},
        total_count = total_count + ${c.passed + c.failed + c.flaky + c.skipped},
        last_activity_at = ${now}
      where id = ${runId}`;
  } else {
    await sql`update test_runs set last_activity_at = ${now} where id = ${runId}`;
  }
  return inserted.length;
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
