import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TestRun } from './schema.ts';
import type { RunRow } from './store.ts';

/** How long a run page's link opens: it is a bearer link, handed around in CI logs and chat. */
export const SUMMARY_LINK_DAYS = 30;
const DAY_S = 86_400;

function signature(secret: string, runId: number, expiresS: number): string {
  return createHmac('sha256', secret).update(`summary:${runId}:${expiresS}`).digest('base64url').slice(0, 32);
}

/**
 * The run page's token, `<expiry in epoch seconds>.<signature>`: it opens the page for a person
 * without a key until it expires. The expiry is rounded up to a day, so links handed out on one
 * day are the same link.
 */
export function summaryToken(secret: string, runId: number, now: Date): string {
  const expiresS = (Math.ceil(now.getTime() / 1000 / DAY_S) + SUMMARY_LINK_DAYS) * DAY_S;
  return `${expiresS}.${signature(secret, runId, expiresS)}`;
}

/** Whether `given` is this run's token: 'ok', 'expired' (signed by us, too old) or 'invalid'. */
export function checkSummaryToken(secret: string, runId: number, given: string, now: Date): 'ok' | 'expired' | 'invalid' {
  const match = /^(\d{1,12})\.([\w-]{32})$/.exec(given);
  if (!match) return 'invalid';
  const expiresS = Number(match[1]);
  const expected = Buffer.from(signature(secret, runId, expiresS));
  const actual = Buffer.from(match[2] as string);
  if (!timingSafeEqual(expected, actual)) return 'invalid';
  return expiresS * 1000 > now.getTime() ? 'ok' : 'expired';
}

export function summaryUrl(publicUrl: string, secret: string, runId: number, now: Date): string {
  return `${publicUrl}/runs/${runId}?token=${summaryToken(secret, runId, now)}`;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function presentRun(row: RunRow, publicUrl: string, secret: string, now: Date): TestRun {
  return {
    id: row.id,
    number: row.number,
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
    pull_request: row.pull_request,
    build_branch: row.build_branch,
    commit: row.commit,
    created_at: row.created_at.toISOString(),
    run_started_at: iso(row.run_started_at),
    run_ended_at: iso(row.run_ended_at),
    test_run_head_sha: row.test_run_head_sha,
    summary_url: summaryUrl(publicUrl, secret, row.id, now),
    total_shards: row.total_shards,
    rerun_source_id: row.rerun_source_id,
    error_reason: row.error_reason,
    cancel_reason: row.cancel_reason,
    cancelled_by: row.cancelled_by,
    max_failures: row.max_failures,
    order_strategy: row.order_strategy,
    selection: row.selection,
    pinned: row.pinned,
    details_deleted: row.details_deleted_at !== null,
  };
}
