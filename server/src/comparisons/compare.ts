import type { Sql } from '../db.ts';
import { GoneError, NotFoundError } from '../errors.ts';
import { getRunById, type RunRow } from '../runs/index.ts';
import { COMPARED_LISTS, type ComparedTest, type Comparison } from './schema.ts';
import { comparedLists, type ComparedRow, durationChanges } from './store.ts';

async function comparableRun(sql: Sql, projectId: number, runId: number, field: string): Promise<RunRow> {
  const run = await getRunById(sql, runId);
  if (!run || run.project_id !== projectId) throw new NotFoundError(`${field}: test run ${runId} not found`);
  if (run.details_deleted_at) throw new GoneError(`${field}: the retention policy deleted test run ${runId}'s results; only its counts are kept`);
  return run;
}

const reference = (run: RunRow) => ({
  id: run.id,
  number: run.number,
  state: run.state,
  environment_slug: run.environment_slug,
  branch: run.test_run_branch,
  commit: run.test_run_head_sha ?? run.commit,
  created_at: run.created_at.toISOString(),
});

function listOf(rows: ComparedRow[]): { total: number; tests: ComparedTest[] } {
  return { total: rows[0]?.total ?? 0, tests: rows.map(({ list: _list, total: _total, ...test }) => test) };
}

/** Run `runId` against `baseId` of the same project: what changed between them, each list bounded by `limit`. */
export async function compareRuns(sql: Sql, projectId: number, runId: number, baseId: number, limit: number): Promise<Comparison> {
  // One after the other: when both are wrong, the answer names the first.
  const run = await comparableRun(sql, projectId, runId, 'path.id');
  const base = await comparableRun(sql, projectId, baseId, 'path.otherId');
  const [listed, durations] = await Promise.all([
    comparedLists(sql, projectId, runId, baseId, limit),
    durationChanges(sql, projectId, runId, baseId, Math.min(limit, 50)),
  ]);
  const lists = Object.fromEntries(COMPARED_LISTS.map((name) => [name, listOf(listed.filter((row) => row.list === name))])) as Record<
    (typeof COMPARED_LISTS)[number],
    ReturnType<typeof listOf>
  >;
  return { run: reference(run), base: reference(base), ...lists, duration_changes: listOf(durations) };
}
