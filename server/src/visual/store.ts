import type { Tx } from '../db.ts';
import type { Box, Comparison } from './compare.ts';

// The one module that writes `visual_changes` and `visual_scan`.

/**
 * Attachments declared in transactions that committed out of id order are found by looking back
 * this many ids behind the scan's position at every pass (recording a change again changes nothing).
 */
const LOOK_BACK = 500;
const SCAN_BATCH = 2000;

/** The scan's position, locked for this pass; its one row made on the first pass (null: another pass holds it). */
async function scanPosition(sql: Tx): Promise<{ last: number } | null> {
  const read = () => sql<{ last: number }[]>`select last_attachment_id::float8 as last from visual_scan where id = 1 for update skip locked`;
  const [position] = await read();
  if (position) return position;
  await sql`insert into visual_scan (id, last_attachment_id) values (1, 0) on conflict (id) do nothing`;
  return (await read())[0] ?? null;
}

/**
 * Looks through the attachments declared since the last pass for Playwright's screenshot images
 * (`<name>-expected.png`, `-actual.png`, `-diff.png`) and records a change per attempt and snapshot
 * name. Answers whether there was anything new to look at.
 */
export async function scanAttachments(sql: Tx, now: Date): Promise<{ more: boolean; runs: { project_id: number; test_run_id: number }[] }> {
  const position = await scanPosition(sql);
  if (!position) return { more: false, runs: [] };
  const [bounds] = await sql<{ high: number | null }[]>`
    select max(id)::float8 as high from (select id from test_attachments where id > ${position.last} order by id limit ${SCAN_BATCH}) as next`;
  const high = bounds?.high ?? null;
  const low = Math.max(0, position.last - LOOK_BACK);
  const touched = await sql<{ project_id: number; test_run_id: number }[]>`
    insert into visual_changes (project_id, test_run_id, test_case_id, retry, snapshot_name,
                                expected_attachment_id, actual_attachment_id, diff_attachment_id, created_at)
    select project_id, test_run_id, test_case_id, retry, parts[1],
           min(id) filter (where parts[2] = 'expected'), min(id) filter (where parts[2] = 'actual'),
           min(id) filter (where parts[2] = 'diff'), ${now}
    from (
      select id, project_id, test_run_id, test_case_id, retry, regexp_match(name, '^(.+)-(expected|actual|diff)\\.png$') as parts
      from test_attachments
      where id > ${low} and id <= ${high ?? position.last} and content_type like 'image/png%'
    ) as found
    where parts is not null
    group by project_id, test_run_id, test_case_id, retry, parts[1]
    on conflict (test_run_id, test_case_id, retry, snapshot_name) do update set
      expected_attachment_id = coalesce(visual_changes.expected_attachment_id, excluded.expected_attachment_id),
      actual_attachment_id = coalesce(visual_changes.actual_attachment_id, excluded.actual_attachment_id),
      diff_attachment_id = coalesce(visual_changes.diff_attachment_id, excluded.diff_attachment_id)
    where visual_changes.expected_attachment_id is distinct from coalesce(visual_changes.expected_attachment_id, excluded.expected_attachment_id)
       or visual_changes.actual_attachment_id is distinct from coalesce(visual_changes.actual_attachment_id, excluded.actual_attachment_id)
       or visual_changes.diff_attachment_id is distinct from coalesce(visual_changes.diff_attachment_id, excluded.diff_attachment_id)
    returning project_id, test_run_id`;
  const runs = [...new Map(touched.map((row) => [row.test_run_id, row])).values()];
  if (high === null) return { more: false, runs };
  await sql`update visual_scan set last_attachment_id = ${high} where id = 1`;
  return { more: true, runs };
}

export interface ToCompare {
  id: number;
  project_id: number;
  test_run_id: number;
  expected_key: string;
  actual_key: string;
}

/** A change whose baseline and new image are stored and that was not compared yet; null when none. */
export async function nextToCompare(sql: Tx): Promise<ToCompare | null> {
  const [row] = await sql<ToCompare[]>`
    select v.id::int as id, v.project_id, v.test_run_id, eb.storage_key as expected_key, ab.storage_key as actual_key
    from visual_changes v
    join test_attachments e on e.id = v.expected_attachment_id
    join artifact_blobs eb on eb.id = e.blob_id
    join test_attachments a on a.id = v.actual_attachment_id
    join artifact_blobs ab on ab.id = a.blob_id
    where v.compared_at is null and v.expected_attachment_id is not null and v.actual_attachment_id is not null
      and eb.storage_key is not null and ab.storage_key is not null
    order by v.id
    limit 1`;
  return row ?? null;
}

/** A comparison as stored: compare.ts's answer and the threshold it was made with. */
export type Compared = Comparison & { threshold: number };

export async function recordComparison(sql: Tx, id: number, compared: Compared | { error: string }, now: Date): Promise<void> {
  if ('error' in compared) {
    await sql`update visual_changes set compared_at = ${now}, compare_error = ${compared.error} where id = ${id} and compared_at is null`;
    return;
  }
  await sql`
    update visual_changes set width = ${compared.width}, height = ${compared.height}, size_changed = ${compared.sizeChanged},
      changed_pixels = ${compared.changedPixels}, changed_ratio = ${compared.changedRatio}, boxes = ${sql.json(compared.boxes as never)},
      threshold = ${compared.threshold}, compared_at = ${now}, compare_error = ${null}
    where id = ${id} and compared_at is null`;
}

export interface ChangeRow {
  id: number;
  test_run_id: number;
  test_case_id: string;
  title: string | null;
  file_path: string | null;
  runner_project: string | null;
  retry: number;
  snapshot_name: string;
  expected_attachment_id: number;
  actual_attachment_id: number;
  diff_attachment_id: number | null;
  width: number | null;
  height: number | null;
  size_changed: boolean | null;
  changed_pixels: number | null;
  changed_ratio: number | null;
  boxes: Box[] | null;
  threshold: number;
  compared_at: Date | null;
  compare_error: string | null;
  review: 'pending' | 'approved' | 'rejected';
  reviewed_by_name: string | null;
  reviewed_at: Date | null;
  baseline_commit_id: number | null;
}

const CHANGE_COLUMNS = (sql: Tx) => sql`
  v.id::int as id, v.test_run_id, v.test_case_id, c.name as title, c.file_path, c.runner_project, v.retry, v.snapshot_name,
  v.expected_attachment_id::int as expected_attachment_id, v.actual_attachment_id::int as actual_attachment_id,
  v.diff_attachment_id::int as diff_attachment_id, v.width, v.height, v.size_changed, v.changed_pixels, v.changed_ratio, v.boxes,
  v.threshold, v.compared_at, v.compare_error, v.review, v.reviewed_by_name, v.reviewed_at,
  v.baseline_commit_id::int as baseline_commit_id`;

/**
 * The run's visual changes, the last attempt of each test and snapshot only (a retry that changed
 * the same screenshot again is the one to review), by test and snapshot name.
 */
export async function listRunChanges(sql: Tx, projectId: number, runId: number): Promise<ChangeRow[]> {
  return sql<ChangeRow[]>`
    select ${CHANGE_COLUMNS(sql)}
    from visual_changes v
    left join test_cases c on c.project_id = v.project_id and c.id = v.test_case_id
    where v.project_id = ${projectId} and v.test_run_id = ${runId}
      and v.expected_attachment_id is not null and v.actual_attachment_id is not null
      and not exists (
        select 1 from visual_changes later
        where later.test_run_id = v.test_run_id and later.test_case_id = v.test_case_id
          and later.snapshot_name = v.snapshot_name and later.retry > v.retry
          and later.expected_attachment_id is not null and later.actual_attachment_id is not null)
    order by c.file_path nulls last, c.name nulls last, v.test_case_id, v.snapshot_name`;
}

export interface Counts {
  total: number;
  /** Real changes awaiting review (flaky and noise ones await none). */
  pending: number;
  approved: number;
  rejected: number;
  /** Changes that did not reproduce on a retry, and diffs under the noise ratio: counted apart, never baselines. */
  flaky: number;
  noise: number;
}

export function countsOf(rows: { review: ChangeRow['review']; verdict: { kind: 'change' | 'flaky' | 'noise' } }[]): Counts {
  const real = rows.filter((r) => r.verdict.kind === 'change');
  return {
    total: rows.length,
    pending: real.filter((r) => r.review === 'pending').length,
    approved: real.filter((r) => r.review === 'approved').length,
    rejected: real.filter((r) => r.review === 'rejected').length,
    flaky: rows.filter((r) => r.verdict.kind === 'flaky').length,
    noise: rows.filter((r) => r.verdict.kind === 'noise').length,
  };
}

/** Sets the review of these changes of the run (locked first, in id order); answers those that changed, before and after. */
export async function setReview(
  sql: Tx,
  projectId: number,
  runId: number,
  ids: number[],
  review: 'approved' | 'rejected',
  reviewer: { id: string; name: string },
  now: Date,
): Promise<{ id: number; snapshot_name: string; before: string }[]> {
  const locked = await sql<{ id: number; snapshot_name: string; review: string }[]>`
    select id::int as id, snapshot_name, review from visual_changes
    where project_id = ${projectId} and test_run_id = ${runId} and id = any(${ids}::bigint[])
    order by id for update`;
  const changing = locked.filter((row) => row.review !== review);
  if (changing.length === 0) return [];
  await sql`
    update visual_changes set review = ${review}, reviewed_by = ${reviewer.id}, reviewed_by_name = ${reviewer.name}, reviewed_at = ${now}
    where id = any(${changing.map((row) => row.id)}::bigint[])`;
  return changing.map((row) => ({ id: row.id, snapshot_name: row.snapshot_name, before: row.review }));
}

/** Whether every change of the run with both images stored was compared. */
export async function allCompared(sql: Tx, runId: number): Promise<boolean> {
  const rows = await sql`
    select 1 from visual_changes where test_run_id = ${runId} and compared_at is null
      and expected_attachment_id is not null and actual_attachment_id is not null limit 1`;
  return rows.length === 0;
}

/** Whether the run is one of the project's. */
export async function runOfProject(sql: Tx, projectId: number, runId: number): Promise<boolean> {
  const rows = await sql`select 1 from test_runs where id = ${runId} and project_id = ${projectId}`;
  return rows.length > 0;
}

/** The person's name (or the key's), for the review's "by". */
export async function reviewerName(sql: Tx, actor: { kind: 'user' | 'key'; id: string }): Promise<string> {
  if (actor.kind === 'key') return `key ${actor.id}`;
  const [row] = await sql<{ name: string }[]>`select name from users where id = ${actor.id}`;
  return row?.name ?? actor.id;
}
