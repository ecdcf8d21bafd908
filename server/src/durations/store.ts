import type { Tx } from '../db.ts';
import { type DurationShift, SHIFT_RULES } from './shift.ts';

// The SQL of duration shifts: which tests of a rolled-up run to look at, their passed durations,
// and the one table this feature writes.

export interface RunPlace {
  project_id: number;
  environment_id: number;
}

export async function runPlace(sql: Tx, runId: number): Promise<RunPlace | null> {
  const [row] = await sql<RunPlace[]>`select project_id, environment_id from test_runs where id = ${runId}`;
  return row ?? null;
}

/**
 * The run's tests worth a look: those that passed slower than their mean in the environment by
 * the rules' share and milliseconds (a slowdown shows first as a slow run), and those already
 * flagged there (to see whether they still are). Most runs have few of either.
 */
export async function candidateTests(sql: Tx, runId: number, place: RunPlace): Promise<string[]> {
  const rows = await sql<{ test_case_id: string }[]>`
    with latest as (
      select max(day) as day from test_case_cumulative where project_id = ${place.project_id} and environment_id = ${place.environment_id}
    )
    select r.test_case_id from test_results r
    join test_case_cumulative c
      on c.project_id = ${place.project_id} and c.environment_id = ${place.environment_id}
     and c.day = (select day from latest) and c.test_case_id = r.test_case_id and c.total_runs > 0
    where r.test_run_id = ${runId} and r.is_final and r.outcome = 'passed'
      and r.duration >= (c.duration_sum::float8 / c.total_runs) * ${1 + SHIFT_RULES.minRise}
      and r.duration - (c.duration_sum::float8 / c.total_runs) >= ${SHIFT_RULES.minRiseMs}
    union
    select test_case_id from duration_shifts where project_id = ${place.project_id} and environment_id = ${place.environment_id}`;
  return rows.map((row) => row.test_case_id);
}

export interface DurationRow {
  test_case_id: string;
  run_id: number;
  run_number: number;
  duration: number;
}

/**
 * The tests' passed durations in the environment's newest ended runs up to this one, oldest
 * first. Twice the rules' window of runs is read: a test is not in every run (shards, skips).
 */
export async function passedDurations(sql: Tx, runId: number, place: RunPlace, testIds: string[]): Promise<DurationRow[]> {
  if (testIds.length === 0) return [];
  return sql<DurationRow[]>`
    with runs as materialized (
      select id, number from test_runs
      where environment_id = ${place.environment_id} and run_ended_at is not null and id <= ${runId}
      order by run_ended_at desc
      limit ${SHIFT_RULES.maxRuns * 2}
    )
    select r.test_case_id, r.test_run_id as run_id, runs.number as run_number, r.duration
    from test_results r join runs on runs.id = r.test_run_id
    where r.test_run_id = any((select coalesce(array_agg(id), '{}') from runs)::int[])
      and r.test_case_id = any(${testIds}::text[]) and r.is_final and r.outcome = 'passed'
    order by r.test_case_id, r.test_run_id`;
}

export interface FoundShift extends DurationShift {
  testCaseId: string;
}

/** Writes the environment's findings for these tests: the found ones kept (first detection time kept), the others removed. */
export async function saveShifts(sql: Tx, place: RunPlace, looked: string[], found: FoundShift[], now: Date): Promise<void> {
  const cleared = new Set(looked);
  for (const shift of found) cleared.delete(shift.testCaseId);
  if (cleared.size > 0) {
    await sql`
      delete from duration_shifts
      where project_id = ${place.project_id} and environment_id = ${place.environment_id} and test_case_id = any(${[...cleared]}::text[])`;
  }
  if (found.length === 0) return;
  await sql`
    insert into duration_shifts (project_id, environment_id, test_case_id, started_run_id, started_run_number, baseline_ms, recent_ms, z, runs_counted, detected_at, updated_at)
    select ${place.project_id}, ${place.environment_id}, f.test_case_id, f.started_run_id, f.started_run_number, f.baseline_ms, f.recent_ms, f.z, f.runs_counted, ${now}, ${now}
    from unnest(${found.map((f) => f.testCaseId)}::text[], ${found.map((f) => f.startedRunId)}::int[], ${found.map((f) => f.startedRunNumber)}::int[],
                ${found.map((f) => f.baselineMs)}::int[], ${found.map((f) => f.recentMs)}::int[], ${found.map((f) => f.z)}::float8[], ${found.map((f) => f.runs)}::int[])
      as f(test_case_id, started_run_id, started_run_number, baseline_ms, recent_ms, z, runs_counted)
    on conflict (project_id, environment_id, test_case_id) do update set
      started_run_id = excluded.started_run_id, started_run_number = excluded.started_run_number,
      baseline_ms = excluded.baseline_ms, recent_ms = excluded.recent_ms, z = excluded.z,
      runs_counted = excluded.runs_counted, updated_at = excluded.updated_at`;
}

export interface SlowerTestRow {
  test_case_id: string;
  title: string;
  file_path: string;
  runner_project: string;
  environment_id: number;
  environment_name: string;
  started_run_id: number | null;
  started_run_number: number;
  baseline_ms: number;
  recent_ms: number;
  z: number;
  runs_counted: number;
  detected_at: Date;
}

export async function listSlowerTests(
  sql: Tx,
  projectId: number,
  filter: { environmentId: number | null; testCaseId: string | null; limit: number; offset: number },
): Promise<{ rows: SlowerTestRow[]; total: number }> {
  const where = sql`
    s.project_id = ${projectId}
    ${filter.environmentId !== null ? sql`and s.environment_id = ${filter.environmentId}` : sql``}
    ${filter.testCaseId !== null ? sql`and s.test_case_id = ${filter.testCaseId}` : sql``}`;
  const [rows, [count]] = await Promise.all([
    sql<SlowerTestRow[]>`
      select s.test_case_id, coalesce(tc.name, s.test_case_id) as title, coalesce(tc.file_path, '') as file_path,
             coalesce(tc.runner_project, '') as runner_project, s.environment_id, env.name as environment_name, s.started_run_id, s.started_run_number,
             s.baseline_ms, s.recent_ms, s.z, s.runs_counted, s.detected_at
      from duration_shifts s join environments env on env.id = s.environment_id
      left join test_cases tc on tc.project_id = s.project_id and tc.id = s.test_case_id
      where ${where}
      order by (s.recent_ms - s.baseline_ms)::float8 / greatest(s.baseline_ms, 1) desc, s.test_case_id, s.environment_id
      limit ${filter.limit} offset ${filter.offset}`,
    sql<{ total: number }[]>`select count(*)::int as total from duration_shifts s where ${where}`,
  ]);
  return { rows, total: count?.total ?? 0 };
}

export interface ShiftMark {
  test_case_id: string;
  started_run_id: number | null;
  started_run_number: number;
  baseline_ms: number;
  recent_ms: number;
}

/** Which of these tests are flagged slower in the environment of the run. */
export async function shiftsInRunEnvironment(sql: Tx, projectId: number, runId: number, testIds: string[]): Promise<ShiftMark[]> {
  if (testIds.length === 0) return [];
  return sql<ShiftMark[]>`
    select s.test_case_id, s.started_run_id, s.started_run_number, s.baseline_ms, s.recent_ms
    from duration_shifts s join test_runs r on r.id = ${runId} and r.project_id = ${projectId}
    where s.project_id = ${projectId} and s.environment_id = r.environment_id and s.test_case_id = any(${testIds}::text[])`;
}
