import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TestRun } from './schema.ts';
import type { RunRow } from './store.ts';

/** The run page's link carries a token so that it opens for a person without a key. */
export function summaryToken(secret: string, runId: number): string {
  return createHmac('sha256', secret).update(`summary:${runId}`).digest('base64url').slice(0, 32);
}

export function summaryTokenMatches(secret: string, runId: number, given: string): boolean {
  const expected = Buffer.from(summaryToken(secret, runId));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export function summaryUrl(publicUrl: string, secret: string, runId: number): string {
  return `${publicUrl}/runs/${runId}?token=${summaryToken(secret, runId)}`;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function presentRun(row: RunRow, publicUrl: string, secret: string): TestRun {
  return {
    id: row.id,
    state: row.state,
    total_count: row.total_count,
    success_count: row.success_count,
    failed_count: row.failed_count,
    skipped_count: row.skipped_count,
    flaky_count: row.flaky_count,
    duration: row.duration,
    test_run_branch: row.test_run_branch,
    environment_id: row.environment_id,
    environment_slug: row.environment_slug,
    environment_name: row.environment_name,
    build_url: row.build_url,
    build_branch: row.build_branch,
    commit: row.commit,
    created_at: row.created_at.toISOString(),
    run_started_at: iso(row.run_started_at),
    run_ended_at: iso(row.run_ended_at),
    test_run_head_sha: row.test_run_head_sha,
    summary_url: summaryUrl(publicUrl, secret, row.id),
    total_shards: row.total_shards,
    rerun_source_id: row.rerun_source_id,
    error_reason: row.error_reason,
    cancel_reason: row.cancel_reason,
  };
}
