import type { Tx } from '../db.ts';
import type { FoundGroup, FoundRun, FoundTest } from './schema.ts';

// Reads only. Text is matched with strpos on lower-cased columns, never LIKE, so that `%` and `_`
// in what a person typed mean themselves.

export function testsContaining(sql: Tx, projectId: number, text: string, limit: number): Promise<FoundTest[]> {
  return sql<FoundTest[]>`
    select id as test_case_id, name as title, file_path, runner_project, is_active
    from test_cases
    where project_id = ${projectId} and (strpos(lower(name), ${text}) > 0 or strpos(lower(file_path), ${text}) > 0)
    order by is_active desc, strpos(lower(name), ${text}) = 0, file_path, line, name, runner_project
    limit ${limit}`;
}

const RUN_COLUMNS = (sql: Tx) => sql`
  r.id, r.number, r.state, e.name as environment_name, coalesce(r.test_run_branch, r.build_branch) as branch,
  coalesce(r.test_run_head_sha, r.commit) as commit, r.created_at`;

/** The run of that number in the project, at most one. */
export function runNumbered(sql: Tx, projectId: number, number: number): Promise<Omit<FoundRun, 'matched'>[]> {
  return sql<Omit<FoundRun, 'matched'>[]>`
    select ${RUN_COLUMNS(sql)} from test_runs r join environments e on e.id = r.environment_id
    where r.project_id = ${projectId} and r.number = ${number}`;
}

/**
 * The newest runs whose commit starts with `hex` (when given) or whose branch contains `text`:
 * walked newest first by the project's index, so a common match stops early.
 */
export function runsMatching(
  sql: Tx,
  projectId: number,
  text: string,
  hex: string | null,
  limit: number,
): Promise<(Omit<FoundRun, 'matched'> & { by_commit: boolean })[]> {
  return sql<(Omit<FoundRun, 'matched'> & { by_commit: boolean })[]>`
    select ${RUN_COLUMNS(sql)}, coalesce(${hex}::text is not null and starts_with(lower(coalesce(r.test_run_head_sha, r.commit, '')), ${hex}::text), false) as by_commit
    from test_runs r join environments e on e.id = r.environment_id
    where r.project_id = ${projectId}
      and (
        (${hex}::text is not null and starts_with(lower(coalesce(r.test_run_head_sha, r.commit, '')), ${hex}::text))
        or strpos(lower(coalesce(r.test_run_branch, r.build_branch, '')), ${text}) > 0
      )
    order by r.id desc
    limit ${limit}`;
}

export function groupsContaining(sql: Tx, projectId: number, text: string, limit: number): Promise<FoundGroup[]> {
  return sql<FoundGroup[]>`
    select id, title, category, status from failure_groups
    where project_id = ${projectId} and strpos(lower(title), ${text}) > 0
    order by last_seen_at desc nulls last, id
    limit ${limit}`;
}
