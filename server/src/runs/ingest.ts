import { InvalidInputError, NotFoundError, RunEndedError } from '../errors.ts';
import { copyRows, pipelinedTransaction, type PipelinedWork, retryingConflicts, type Sql, type Tx } from '../db.ts';
import { upsertTestCases } from '../testcases/index.ts';
import { isTerminal, type RunState } from '../states.ts';
import { finishRun } from './finish.ts';
import { markRunning, touchRun } from './record.ts';
import type { ShardBegin } from './schema.ts';

interface LockedRun {
  id: number;
  /** Its number in the project: what pages and messages name it by. */
  number: number;
  project_id: number;
  environment_id: number;
  state: RunState;
  total_shards: number;
}

/**
 * Locks the run row; results for a finished run are refused so the reporter stops. Result batches
 * and shard begins take a key-share lock: they then write side by side (their updates of the run's
 * row do not conflict with it), while completion's exclusive lock waits for them and they for it.
 */
export async function lockOpenRun(sql: Tx, projectId: number, runId: number, mode: 'exclusive' | 'batch' = 'exclusive'): Promise<LockedRun> {
  const [run] = await sql<LockedRun[]>`
    select id, number, project_id, environment_id, state, total_shards from test_runs
    where project_id = ${projectId} and id = ${runId} ${mode === 'batch' ? sql`for key share` : sql`for update`}`;
  const refusal = closedRunRefusal(run, runId);
  if (refusal) throw refusal;
  return run as LockedRun;
}

/** Why results cannot go into a run (none in the project, or ended); null when they can. */
export function closedRunRefusal(run: { state: RunState } | undefined, runId: number): NotFoundError | RunEndedError | null {
  if (!run) return new NotFoundError('test run not found');
  if (isTerminal(run.state)) return new RunEndedError(`test run ${runId} is already ${run.state}`);
  return null;
}

/**
 * A shard starts: the run is running, the shard's tests are listed in the run and the inventory.
 * One transaction; answers the run's number in its project.
 */
export function beginShard(sql: Sql, projectId: number, runId: number, shard: number, body: ShardBegin, now: Date): Promise<number> {
  return retryingConflicts(() => pipelinedTransaction(sql, (tx) => recordShardBegin(tx, projectId, runId, shard, body, now)));
}

/**
 * The run's lock and every write go out together, in one round trip (PostgreSQL runs them in that
 * order); a run that refuses the shard rolls the writes back. Not the exclusive lock: the batches of
 * the run's other shards, each holding its key share, would make a begin wait, and every batch
 * asked for after it would then wait behind it.
 */
async function recordShardBegin(sql: Tx, projectId: number, runId: number, shard: number, body: ShardBegin, now: Date): Promise<PipelinedWork<number>> {
  const locked = lockOpenRun(sql, projectId, runId, 'batch');
  const startedAt = body.started_at ? new Date(body.started_at) : now;
  const written = Promise.all([
    sql`
      insert into test_run_shards (test_run_id, shard, complete, started_at) values (${runId}, ${shard}, ${body.complete}, ${startedAt})
      on conflict (test_run_id, shard) do nothing`,
    markRunning(sql, runId, startedAt, body.commit, now),
    upsertTestCases(sql, projectId, body.tests, body.commit, now),
    listRunTests(sql, projectId, runId, body),
  ]);
  // A refused run fails these too (the transaction is aborted): the lock's refusal is the answer.
  written.catch(() => undefined);
  const run = await locked;
  if (shard > run.total_shards) throw new InvalidInputError(`path.shard: this run has ${run.total_shards} shard(s)`);
  return { result: run.number, last: written };
}

/**
 * An upload's tests, listed in the inventory and the run as they come, inside the upload's
 * transaction. The run's list by COPY where the database takes it, a third of the insert's cost at
 * 100,000 tests: an upload's tests are new to its run, and one that is not fails the COPY (and the
 * upload), where the insert would skip it.
 */
export async function listUploadedTests(
  sql: Tx,
  projectId: number,
  runId: number,
  tests: ShardBegin['tests'],
  options: { commit: string | null; now: Date; copy: boolean },
): Promise<void> {
  await upsertTestCases(sql, projectId, tests, options.commit, options.now);
  if (!options.copy) return listRunTests(sql, projectId, runId, { tests });
  const rows = tests.map((t) => [runId, t.id, projectId, t.title, t.file_path, t.runner_project]);
  await copyRows(sql, 'test_run_tests', ['test_run_id', 'test_case_id', 'project_id', 'title', 'file_path', 'runner_project'], rows);
}

async function listRunTests(sql: Tx, projectId: number, runId: number, body: Pick<ShardBegin, 'tests'>): Promise<void> {
  if (body.tests.length === 0) return;
  const rows = body.tests.map((t) => ({ id: t.id, title: t.title, file_path: t.file_path, runner_project: t.runner_project }));
  await sql`
    insert into test_run_tests (test_run_id, test_case_id, project_id, title, file_path, runner_project)
    select ${runId}, x.id, ${projectId}, x.title, x.file_path, x.runner_project
    from jsonb_to_recordset(${sql.json(rows)}) as x(id text, title text, file_path text, runner_project text)
    on conflict (test_run_id, test_case_id) do nothing`;
}

export type ShardEndStatus = 'passed' | 'failed' | 'timedout' | 'interrupted' | 'crashed';

type ShardEndInput = [projectId: number, runId: number, shard: number, end: { status: ShardEndStatus; errors: string[] }, now: Date];

/** A shard ends; when it is the last, the run ends. One transaction. */
export function endShard(sql: Sql, ...input: ShardEndInput): Promise<void> {
  return retryingConflicts(() => sql.begin((tx) => recordShardEnd(tx, ...input)));
}

export async function recordShardEnd(sql: Tx, ...[projectId, runId, shard, end, now]: ShardEndInput): Promise<void> {
  await lockOpenRun(sql, projectId, runId);
  await sql`
    insert into test_run_shards (test_run_id, shard, status, errors, started_at, ended_at)
    values (${runId}, ${shard}, ${end.status}, ${end.errors}, ${now}, ${now})
    on conflict (test_run_id, shard) do update set status = excluded.status, errors = excluded.errors, ended_at = excluded.ended_at
    where test_run_shards.status is null`;
  await touchRun(sql, runId, now);
  const [progress] = await sql<{ ended: number; total: number }[]>`
    select count(*) filter (where s.status is not null)::int as ended, r.total_shards as total
    from test_runs r left join test_run_shards s on s.test_run_id = r.id
    where r.id = ${runId} group by r.total_shards`;
  if (progress && progress.ended >= progress.total) await finishRun(sql, runId, { kind: 'reported' }, now);
}
