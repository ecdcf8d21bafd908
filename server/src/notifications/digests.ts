import type { Sql } from '../db.ts';
import { queueDigest, takeDueSubscriptions } from './rules-store.ts';
import { latestDue, nextDue } from './schedule.ts';

// The digests' tick: every server's sweeper calls it; each subscription due makes one delivery in
// the outbox, sent (and retried) by the notification job like any other.

/**
 * Queues the digest of each subscription that came due by `now`: the latest moment of its
 * schedule (a server down for days sends one, not one per day missed), then moves it to its next
 * moment. Rows are locked and skipped by another server meanwhile, and the outbox's key
 * (subscription, moment) holds one delivery whatever races it. Returns the subscriptions queued.
 */
export async function queueDueDigests(sql: Sql, now: Date): Promise<number[]> {
  return sql.begin(async (tx) => {
    const queued: number[] = [];
    for (const subscription of await takeDueSubscriptions(tx, now)) {
      const dueAt = latestDue(subscription, now);
      const next = nextDue(subscription, now);
      if (dueAt && (await queueDigest(tx, subscription, dueAt, next, now))) queued.push(subscription.id);
    }
    return queued;
  });
}
