import type { Tx } from '../db.ts';
import type { Box } from './compare.ts';
import type { ChangeRow } from './store.ts';

// The reads a visual change's verdict is worked out from (verdict.ts): the project's noise setting,
// the attempts that passed, the same screenshot's recent diffs.

export interface NoiseSetting {
  ratio: number | null;
  runs: number;
}

export async function noiseSetting(sql: Tx, projectId: number): Promise<NoiseSetting> {
  const [row] = await sql<NoiseSetting[]>`select visual_noise_ratio as ratio, visual_noise_runs as runs from projects where id = ${projectId}`;
  return row ?? { ratio: null, runs: 5 };
}

/** Per test: the first attempt after which one passed, of the run's tests with changes. */
export async function passedRetries(sql: Tx, runId: number, testIds: string[]): Promise<Map<string, number[]>> {
  if (testIds.length === 0) return new Map();
  const rows = await sql<{ test_case_id: string; retry: number }[]>`
    select test_case_id, retry from test_results
    where test_run_id = ${runId} and test_case_id = any(${testIds}::text[]) and status = 'passed'`;
  const found = new Map<string, number[]>();
  for (const row of rows) found.set(row.test_case_id, [...(found.get(row.test_case_id) ?? []), row.retry]);
  return found;
}

export interface Recent {
  test_run_id: number;
  changed_ratio: number | null;
  size_changed: boolean | null;
  boxes: Box[] | null;
}

/** A screenshot of a test: the key of `recentDiffs`' answer. */
export const screenshotKey = (row: Pick<ChangeRow, 'test_case_id' | 'snapshot_name'>) => `${row.test_case_id}\u0000${row.snapshot_name}`;

/**
 * Each screenshot's diffs (the last attempt of each run) in the environment's last `runs` runs
 * holding its test, up to this one: one statement for every screenshot of the page.
 */
export async function recentDiffs(sql: Tx, runId: number, rows: ChangeRow[], runs: number): Promise<Map<string, Recent[]>> {
  const found = new Map<string, Recent[]>();
  if (rows.length === 0) return found;
  const answer = await sql<(Recent & { test_case_id: string; snapshot_name: string })[]>`
    with wanted as (
      select distinct test_case_id, snapshot_name
      from unnest(${rows.map((r) => r.test_case_id)}::text[], ${rows.map((r) => r.snapshot_name)}::text[]) as w(test_case_id, snapshot_name)
    ), recent as (
      select w.test_case_id, w.snapshot_name, r.id
      from wanted w
      cross join lateral (
        select r.id from test_runs r
        where r.environment_id = (select environment_id from test_runs where id = ${runId}) and r.id <= ${runId}
          and exists (select 1 from test_results t where t.test_run_id = r.id and t.test_case_id = w.test_case_id)
        order by r.id desc limit ${runs}
      ) r
    )
    select distinct on (v.test_case_id, v.snapshot_name, v.test_run_id)
      v.test_case_id, v.snapshot_name, v.test_run_id, v.changed_ratio, v.size_changed, v.boxes
    from visual_changes v
    join recent on recent.id = v.test_run_id and recent.test_case_id = v.test_case_id and recent.snapshot_name = v.snapshot_name
    where v.expected_attachment_id is not null and v.actual_attachment_id is not null
    order by v.test_case_id, v.snapshot_name, v.test_run_id, v.retry desc`;
  for (const { test_case_id, snapshot_name, ...recent } of answer) {
    const key = screenshotKey({ test_case_id, snapshot_name });
    found.set(key, [...(found.get(key) ?? []), recent]);
  }
  return found;
}
