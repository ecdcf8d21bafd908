import type { Tx } from '../db.ts';

/**
 * Whether the run aliased `r` counts for its tests' flakiness: it passed or failed (an error or a
 * cancel says little about a test), and no more than 80% of its tests failed (the environment was
 * down, which says nothing about them).
 */
export function counted(sql: Tx, r: string) {
  return sql`${sql(r)}.state in ('passed', 'failed') and ${sql(r)}.failed_count * 5 <= ${sql(r)}.total_count * 4`;
}

/** The commit a run tested: the executor's checkout, else what the reporter said. */
export function commitOf(sql: Tx, r: string) {
  return sql`coalesce(${sql(r)}.test_run_head_sha, ${sql(r)}."commit")`;
}
