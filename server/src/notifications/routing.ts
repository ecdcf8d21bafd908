import type { Tx } from '../db.ts';
import type { LabelledFailure } from './compose.ts';
import { ownerRoutesToTell, ownersOfFailures, queueOwnerDeliveries } from './rules-store.ts';
import type { EndedRun } from './store.ts';

// Owners' routing rules: a run's failures whose tests an owner owns are also told to the owner's
// destination, only theirs listed, once per run and destination.

/**
 * Whether `owner` is one the pattern names: the same name, or, where the pattern has `*`, any
 * characters in their place. Case-insensitive, as GitHub's and GitLab's user and team names are.
 */
export function ownerMatches(pattern: string, owner: string): boolean {
  const p = pattern.toLowerCase();
  const o = owner.toLowerCase();
  if (!p.includes('*')) return p === o;
  const source = p
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(o);
}

/** Whether any of the test's owners is named by any of the patterns. */
export function ownedBy(patterns: string[], owners: string[]): boolean {
  return owners.some((owner) => patterns.some((pattern) => ownerMatches(pattern, owner)));
}

/**
 * Queues, in the transaction that ends the run, one delivery per destination a rule routes some of
 * the run's failures to (failed tests, not flaky or snoozed ones), within the destination's
 * environments. Returns how many were queued.
 */
export async function enqueueOwnerRoutes(sql: Tx, run: EndedRun, now: Date): Promise<number> {
  if (run.state !== 'failed' && run.state !== 'error') return 0;
  const rules = (await ownerRoutesToTell(sql, run.project_id)).filter((r) => r.environments.length === 0 || r.environments.includes(run.environment_slug));
  if (rules.length === 0) return 0;
  const failures = await ownersOfFailures(sql, run.project_id, run.id);
  const routed = new Map<number, string[]>();
  for (const rule of rules) {
    if (!failures.some((owners) => ownedBy([rule.owner], owners))) continue;
    routed.set(rule.destination_id, [...(routed.get(rule.destination_id) ?? []), rule.owner]);
  }
  await queueOwnerDeliveries(sql, run, routed, now);
  return routed.size;
}

/** The failures an owners delivery lists: the failed ones (not flaky or snoozed) its owners own. */
export function routedFailures(failures: LabelledFailure[], patterns: string[]): LabelledFailure[] {
  return failures.filter((f) => (f.label === 'new' || f.label === 'known') && ownedBy(patterns, f.owners));
}
