import { copyRows, type Tx } from '../db.ts';
import type { ListedTest } from '../testcases/index.ts';
import type { ShardEndStatus } from './schema.ts';

// The SQL of a run's shards (`test_run_shards`) and of the tests they list in it
// (`test_run_tests`): written as shards begin and end, by a reporter or an upload.

/** A shard's row, made as it begins (a retried begin finds it there and leaves it). */
export function insertShard(sql: Tx, runId: number, shard: number, complete: boolean, startedAt: Date) {
  return sql`
    insert into test_run_shards (test_run_id, shard, complete, started_at) values (${runId}, ${shard}, ${complete}, ${startedAt})
    on conflict (test_run_id, shard) do nothing`;
}

/** A shard's end, once: a second end of the same shard changes nothing. */
export async function recordShardStatus(sql: Tx, runId: number, shard: number, end: { status: ShardEndStatus; errors: string[] }, now: Date): Promise<void> {
  await sql`
    insert into test_run_shards (test_run_id, shard, status, errors, started_at, ended_at)
    values (${runId}, ${shard}, ${end.status}, ${end.errors}, ${now}, ${now})
    on conflict (test_run_id, shard) do update set status = excluded.status, errors = excluded.errors, ended_at = excluded.ended_at
    where test_run_shards.status is null`;
}

/** How many of the run's shards have ended, of how many it has. */
export async function shardProgress(sql: Tx, runId: number): Promise<{ ended: number; total: number } | undefined> {
  const [progress] = await sql<{ ended: number; total: number }[]>`
    select count(*) filter (where s.status is not null)::int as ended, r.total_shards as total
    from test_runs r left join test_run_shards s on s.test_run_id = r.id
    where r.id = ${runId} group by r.total_shards`;
  return progress;
}

/** Whether the shard has ended (an upload of it was stored before). */
export async function shardEnded(sql: Tx, runId: number, shard: number): Promise<boolean> {
  const [row] = await sql<{ ended: boolean }[]>`
    select status is not null as ended from test_run_shards where test_run_id = ${runId} and shard = ${shard}`;
  return row?.ended ?? false;
}

/** Tests listed in the run, each once: a test listed already (a retried begin) is skipped. */
export async function listRunTests(sql: Tx, projectId: number, runId: number, tests: readonly ListedTest[]): Promise<void> {
  if (tests.length === 0) return;
  const rows = tests.map((t) => ({ id: t.id, title: t.title, file_path: t.file_path, runner_project: t.runner_project }));
  await sql`
    insert into test_run_tests (test_run_id, test_case_id, project_id, title, file_path, runner_project)
    select ${runId}, x.id, ${projectId}, x.title, x.file_path, x.runner_project
    from jsonb_to_recordset(${sql.json(rows)}) as x(id text, title text, file_path text, runner_project text)
    on conflict (test_run_id, test_case_id) do nothing`;
}

/** Tests new to the run, by COPY: one listed already fails it (and the transaction). */
export async function copyRunTests(sql: Tx, projectId: number, runId: number, tests: readonly ListedTest[]): Promise<void> {
  const rows = tests.map((t) => [runId, t.id, projectId, t.title, t.file_path, t.runner_project]);
  await copyRows(sql, 'test_run_tests', ['test_run_id', 'test_case_id', 'project_id', 'title', 'file_path', 'runner_project'], rows);
}

/** How a shard of a run ended, as its reporter or agent said. */
export interface ShardOutcome {
  shard: number;
  status: string | null;
  complete: boolean;
  errors: string[];
}

export function shardOutcomes(sql: Tx, runId: number): Promise<ShardOutcome[]> {
  return sql<ShardOutcome[]>`select shard, status, complete, errors from test_run_shards where test_run_id = ${runId} order by shard`;
}

/** The tests the run listed, with their runner project. */
export function listedTestsOfRun(sql: Tx, runId: number): Promise<{ test_case_id: string; runner_project: string }[]> {
  return sql<{ test_case_id: string; runner_project: string }[]>`select test_case_id, runner_project from test_run_tests where test_run_id = ${runId}`;
}

/** A run handed to another executor begins its shards again: the lost execution's shards are forgotten. */
export async function forgetShards(sql: Tx, runId: number): Promise<void> {
  await sql`delete from test_run_shards where test_run_id = ${runId}`;
}

/** The tests a run listed, and those of them with no final result yet. */
export async function unfinishedTests(sql: Tx, runId: number): Promise<{ listed: number; unfinished: string[] }> {
  const rows = await sql<{ test_case_id: string; finished: boolean }[]>`
    select l.test_case_id,
      exists (select 1 from test_results t where t.test_run_id = l.test_run_id and t.test_case_id = l.test_case_id and t.is_final) as finished
    from test_run_tests l where l.test_run_id = ${runId}`;
  return { listed: rows.length, unfinished: rows.filter((row) => !row.finished).map((row) => row.test_case_id) };
}
