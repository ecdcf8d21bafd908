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

/**
 * Whether a new test's burn-in (`b`, a burn_in_results row or nulls) found it flaky: its repeats
 * did not all end as the run's own attempt did (some failed where it passed, or the other way).
 */
export function burnedInFlaky(sql: Tx, outcome: string) {
  return sql`coalesce(case when b.test_case_id is null then false
                           when ${sql.unsafe(outcome)} = 'failed' then b.passed > 0
                           else b.passed < b.repeats end, false)`;
}
