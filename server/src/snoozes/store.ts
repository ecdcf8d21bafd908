import type { Tx } from '../db.ts';
import type { SnoozeSource, SnoozeStatus } from './schema.ts';

export interface SnoozeRow {
  id: number;
  test_ids: string[];
  snooze_until: Date;
  description: string | null;
  created_from_test_run_id: number | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  scoped_to_environment_id: number | null;
  source: SnoozeSource;
}

const columns = (sql: Tx) =>
  sql`id, test_ids, snooze_until, description, created_from_test_run_id, created_by, created_at, updated_at,
      scoped_to_environment_id, source`;

export interface NewSnooze {
  testIds: string[];
  snoozeUntil: Date;
  description: string | null;
  createdBy: string | null;
  environmentId: number | null;
  createdFromRunId: number | null;
  /** 'auto': made by the quarantine policy. */
  source: SnoozeSource;
}

export async function createSnooze(sql: Tx, projectId: number, input: NewSnooze, now: Date): Promise<SnoozeRow> {
  const [row] = await sql<SnoozeRow[]>`
    insert into snoozes (project_id, test_ids, snooze_until, description, created_by, scoped_to_environment_id,
                         created_from_test_run_id, source, created_at, updated_at)
    values (${projectId}, ${[...new Set(input.testIds)]}, ${input.snoozeUntil}, ${input.description}, ${input.createdBy},
            ${input.environmentId}, ${input.createdFromRunId}, ${input.source}, ${now}, ${now})
    returning ${columns(sql)}`;
  return row as SnoozeRow;
}

function statusFilter(sql: Tx, status: SnoozeStatus, now: Date) {
  if (status === 'active') return sql`and snooze_until > ${now}`;
  if (status === 'expired') return sql`and snooze_until <= ${now}`;
  return sql``;
}

/** With an environment, the snoozes that apply there: scoped to it, or to all environments. */
function environmentFilter(sql: Tx, environmentId: number | undefined) {
  if (environmentId === undefined) return sql``;
  return sql`and (scoped_to_environment_id is null or scoped_to_environment_id = ${environmentId})`;
}

export async function listSnoozes(
  sql: Tx,
  projectId: number,
  filter: { status: SnoozeStatus; environmentId?: number; now: Date; limit: number; offset: number },
): Promise<{ rows: SnoozeRow[]; total: number }> {
  const where = sql`project_id = ${projectId} ${statusFilter(sql, filter.status, filter.now)} ${environmentFilter(sql, filter.environmentId)}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from snoozes where ${where}`;
  const rows = await sql<SnoozeRow[]>`
    select ${columns(sql)} from snoozes where ${where} order by id desc limit ${filter.limit} offset ${filter.offset}`;
  return { rows, total: count?.total ?? 0 };
}

export interface SnoozePatch {
  snooze_until?: Date;
  description?: string | null;
  scoped_to_environment_id?: number | null;
  test_ids?: string[];
}

export async function updateSnooze(sql: Tx, projectId: number, id: number, patch: SnoozePatch, now: Date): Promise<SnoozeRow | null> {
  const fields: Record<string, unknown> = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  if (patch.test_ids) fields.test_ids = [...new Set(patch.test_ids)];
  fields.updated_at = now;
  const [row] = await sql<SnoozeRow[]>`
    update snoozes set ${sql(fields)} where project_id = ${projectId} and id = ${id} returning ${columns(sql)}`;
  return row ?? null;
}

export async function addSnoozeTestIds(sql: Tx, projectId: number, id: number, testIds: string[], now: Date): Promise<SnoozeRow | null> {
  const [row] = await sql<SnoozeRow[]>`
    update snoozes
    set test_ids = array(select distinct unnest(test_ids || ${testIds}::text[]) order by 1), updated_at = ${now}
    where project_id = ${projectId} and id = ${id}
    returning ${columns(sql)}`;
  return row ?? null;
}

export async function deleteSnooze(sql: Tx, projectId: number, id: number): Promise<SnoozeRow | null> {
  const [row] = await sql<SnoozeRow[]>`
    delete from snoozes where project_id = ${projectId} and id = ${id} returning ${columns(sql)}`;
  return row ?? null;
}

/**
 * Which of a run's failing tests a snooze covers now: those of its project, unscoped or scoped to
 * the run's environment (read in the same statement, so the query can be pipelined).
 */
export async function snoozedTestIdsOfRun(sql: Tx, projectId: number, runId: number, testIds: string[], at: Date): Promise<Set<string>> {
  if (testIds.length === 0) return new Set();
  const rows = await sql<{ test_id: string }[]>`
    select distinct t.test_id
    from snoozes s, unnest(s.test_ids) as t(test_id)
    where s.project_id = ${projectId}
      and s.snooze_until > ${at}
      and (s.scoped_to_environment_id is null
           or s.scoped_to_environment_id = (select environment_id from test_runs where id = ${runId} and project_id = ${projectId}))
      and s.test_ids && ${testIds}::text[]
      and t.test_id = any(${testIds}::text[])`;
  return new Set(rows.map((row) => row.test_id));
}

/** Whether the run a snooze says it was made from is one of the project's. */
export async function runExists(sql: Tx, projectId: number, runId: number): Promise<boolean> {
  const [row] = await sql`select 1 from test_runs where project_id = ${projectId} and id = ${runId}`;
  return row !== undefined;
}

/** The snoozes that name a test, newest first. */
export async function snoozesOfTest(sql: Tx, projectId: number, testCaseId: string): Promise<SnoozeRow[]> {
  return sql<SnoozeRow[]>`
    select ${columns(sql)} from snoozes where project_id = ${projectId} and test_ids @> array[${testCaseId}]::text[]
    order by id desc limit 50`;
}

/** The snoozes in force now that name any of these tests, newest first: which one covers a test where. */
export async function activeSnoozesOfTests(sql: Tx, projectId: number, testIds: string[], now: Date): Promise<SnoozeRow[]> {
  if (testIds.length === 0) return [];
  return sql<SnoozeRow[]>`
    select ${columns(sql)} from snoozes
    where project_id = ${projectId} and snooze_until > ${now} and test_ids && ${testIds}::text[]
    order by id desc`;
}
