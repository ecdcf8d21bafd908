import type { Tx } from '../db.ts';

// The one module that writes `github_pull_comments`: the comment a GitHub destination keeps on a
// pull request, or the note a GitLab one keeps on a merge request (its iid as the number), and its
// sections (one per environment).

export interface PullComment {
  comment_id: number | null;
  sections: Record<string, string>;
}

/** The destination's comment on the pull request, locked until the transaction ends (made empty when there is none). */
export async function lockPullComment(sql: Tx, destinationId: number, pullNumber: number): Promise<PullComment> {
  await sql`
    insert into github_pull_comments (destination_id, pull_number) values (${destinationId}, ${pullNumber})
    on conflict (destination_id, pull_number) do nothing`;
  const [row] = await sql<{ comment_id: string | null; sections: Record<string, string> }[]>`
    select comment_id::text as comment_id, sections from github_pull_comments
    where destination_id = ${destinationId} and pull_number = ${pullNumber} for update`;
  return { comment_id: row?.comment_id ? Number(row.comment_id) : null, sections: row?.sections ?? {} };
}

export async function savePullComment(sql: Tx, destinationId: number, pullNumber: number, comment: PullComment): Promise<void> {
  await sql`
    update github_pull_comments set comment_id = ${comment.comment_id}, sections = ${sql.json(comment.sections)}
    where destination_id = ${destinationId} and pull_number = ${pullNumber}`;
}

/** The tests that failed in the latest run of `branch` in the environment (other than `runId`), and that run; null when it has none. */
export async function failuresOnBranch(
  sql: Tx,
  environmentSlug: string,
  projectId: number,
  branch: string,
  runId: number,
): Promise<{ runId: number; runNumber: number; failed: Set<string> } | null> {
  const [run] = await sql<{ id: number; number: number }[]>`
    select r.id, r.number from test_runs r join environments e on e.id = r.environment_id
    where r.project_id = ${projectId} and e.slug = ${environmentSlug} and r.test_run_branch = ${branch} and r.id <> ${runId}
      and r.state in ('passed', 'failed') and r.details_deleted_at is null
    order by r.id desc limit 1`;
  if (!run) return null;
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results where test_run_id = ${run.id} and is_final and outcome = 'failed'`;
  return { runId: run.id, runNumber: run.number, failed: new Set(rows.map((row) => row.test_case_id)) };
}
