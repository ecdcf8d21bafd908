import { ADVISORY_LOCK, lockAdvisory, type Tx } from '../db.ts';

// The one module that writes `daily_test_flakiness` and the window kept from it
// (`flakiness_window`, `flakiness_windows`): run by run as runs are rolled up (recordRunFlakiness),
// or a project's at once from its results (rebuildFlakiness). Both count the same runs the same
// way (`counted`, the runs that count, read by the store's reads too); test/flaky/flaky.test.ts
// holds them equal.

/**
 * Whether the run aliased `r` counts for its tests' flakiness: it passed or failed (an error or a
 * cancel says little about a test), and no more than 80% of its tests failed (the environment was
 * down, which says nothing about them).
 */
export function counted(sql: Tx, r: string) {
  return sql`${sql(r)}.state in ('passed', 'failed') and ${sql(r)}.failed_count * 5 <= ${sql(r)}.total_count * 4`;
}

/** The commit a run tested: the executor's checkout, else what the reporter said. */
function commitOf(sql: Tx, r: string) {
  return sql`coalesce(${sql(r)}.test_run_head_sha, ${sql(r)}."commit")`;
}

/**
 * Whether a new test's burn-in (`b`, a burn_in_results row or nulls) found it flaky: its repeats
 * did not all end as the run's own attempt did (some failed where it passed, or the other way).
 */
function burnedInFlaky(sql: Tx, outcome: string) {
  return sql`coalesce(case when b.test_case_id is null then false
                           when ${sql.unsafe(outcome)} = 'failed' then b.passed > 0
                           else b.passed < b.repeats end, false)`;
}

/**
 * Adds an ended run to its tests' flakiness of its day: each counted test outcome, flaky when it
 * passed on a retry or when it flipped (passed where the run before on the same commit failed, or
 * the other way round).
 */
export async function recordRunFlakiness(sql: Tx, runId: number): Promise<void> {
  await sql`
    with contribution as (
      select r.project_id, r.environment_id, r.day, t.test_case_id, x.flaky::int as flaky_runs, (t.outcome = 'failed')::int as failed_runs,
             case when x.flaky then r.id end as last_flaky_run_id, x.burned_in_flaky::int as burned_in_flaky
      from (select r.id, r.project_id, r.environment_id, coalesce(r.run_started_at, r.created_at) as started,
                   (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date as day, ${commitOf(sql, 'r')} as sha
            from test_runs r where r.id = ${runId} and ${counted(sql, 'r')}) r
      join test_results t on t.test_run_id = r.id and t.is_final and t.outcome in ('passed', 'failed', 'flaky')
      left join lateral (
        select p.outcome
        from test_runs b
        join test_results p on p.test_run_id = b.id and p.test_case_id = t.test_case_id and p.is_final
        where r.sha is not null and b.environment_id = r.environment_id and ${commitOf(sql, 'b')} = r.sha and b.id <> r.id
          and ${counted(sql, 'b')} and p.outcome in ('passed', 'failed', 'flaky')
          and (coalesce(b.run_started_at, b.created_at), b.id) < (r.started, r.id)
        order by coalesce(b.run_started_at, b.created_at) desc, b.id desc
        limit 1
      ) before on true
      left join burn_in_results b on b.test_run_id = r.id and b.test_case_id = t.test_case_id
      cross join lateral (select ${burnedInFlaky(sql, 't.outcome')} as burned_in_flaky) burn
      cross join lateral (
        select t.outcome = 'flaky' or burn.burned_in_flaky
               or coalesce(t.outcome <> 'flaky' and before.outcome in ('passed', 'failed') and before.outcome <> t.outcome, false) as flaky,
               burn.burned_in_flaky
      ) x
    ), daily as (
      insert into daily_test_flakiness as f (project_id, environment_id, day, test_case_id, counted_runs, flaky_runs, failed_runs,
                                             last_flaky_run_id, burned_in_flaky)
      select project_id, environment_id, day, test_case_id, 1, flaky_runs, failed_runs, last_flaky_run_id, burned_in_flaky from contribution
      on conflict (project_id, environment_id, day, test_case_id) do update set
        counted_runs = f.counted_runs + 1,
        flaky_runs = f.flaky_runs + excluded.flaky_runs,
        failed_runs = f.failed_runs + excluded.failed_runs,
        last_flaky_run_id = greatest(f.last_flaky_run_id, excluded.last_flaky_run_id),
        burned_in_flaky = f.burned_in_flaky + excluded.burned_in_flaky
    )
    insert into flakiness_window as w (project_id, environment_id, test_case_id, runs_counted, flaky_runs, failed_runs, last_flaky_run_id,
                                       burned_in_flaky)
    select c.project_id, c.environment_id, c.test_case_id, 1, c.flaky_runs, c.failed_runs, c.last_flaky_run_id, c.burned_in_flaky
    from contribution c join flakiness_windows k on k.project_id = c.project_id and c.day >= k.since
    on conflict (project_id, environment_id, test_case_id) do update set
      runs_counted = w.runs_counted + 1,
      flaky_runs = w.flaky_runs + excluded.flaky_runs,
      failed_runs = w.failed_runs + excluded.failed_runs,
      last_flaky_run_id = greatest(w.last_flaky_run_id, excluded.last_flaky_run_id),
      burned_in_flaky = w.burned_in_flaky + excluded.burned_in_flaky`;
}

/**
 * Makes the kept window start on `since`: summed again from the daily rows when it started on
 * another day (the day moved on), under the project's rollup lock so that no run adds to it
 * meanwhile. Once a day, or after a rebuild.
 */
export async function ensureWindow(sql: Tx, projectId: number, since: string): Promise<void> {
  const kept = async () => (await sql<{ since: string }[]>`select since::text from flakiness_windows where project_id = ${projectId}`)[0]?.since;
  if ((await kept()) === since) return;
  await lockAdvisory(sql, ADVISORY_LOCK.rollups, projectId);
  if ((await kept()) === since) return;
  await sql`delete from flakiness_window where project_id = ${projectId}`;
  await sql`
    insert into flakiness_window (project_id, environment_id, test_case_id, runs_counted, flaky_runs, failed_runs, last_flaky_run_id,
                                  burned_in_flaky)
    select ${projectId}, environment_id, test_case_id, sum(counted_runs), sum(flaky_runs), sum(failed_runs), max(last_flaky_run_id),
           sum(burned_in_flaky)
    from daily_test_flakiness
    where project_id = ${projectId} and day >= ${since}::date
    group by environment_id, test_case_id`;
  await sql`
    insert into flakiness_windows (project_id, since) values (${projectId}, ${since}::date)
    on conflict (project_id) do update set since = excluded.since`;
}

/**
 * Rewrites a project's flakiness from its runs and results in one pass (inside the rollups'
 * rebuild): the days after `horizon`, those up to it keeping their rows (null: every day).
 */
export async function rebuildFlakiness(sql: Tx, projectId: number, horizon: string | null): Promise<void> {
  const afterHorizon = (day: string) => (horizon === null ? sql`true` : sql`${sql.unsafe(day)} > ${horizon}::date`);
  await sql`delete from daily_test_flakiness where project_id = ${projectId} and ${afterHorizon('day')}`;
  // The kept window is summed again from the new rows at its next use.
  await sql`delete from flakiness_windows where project_id = ${projectId}`;
  await sql`delete from flakiness_window where project_id = ${projectId}`;
  await sql`
    insert into daily_test_flakiness (project_id, environment_id, day, test_case_id, counted_runs, flaky_runs, failed_runs,
                                      last_flaky_run_id, burned_in_flaky)
    select ${projectId}, environment_id, day, test_case_id, count(*), count(*) filter (where flaky),
           count(*) filter (where outcome = 'failed'), max(id) filter (where flaky), count(*) filter (where burned_in_flaky)
    from (
      select id, environment_id, day, test_case_id, outcome, burned_in_flaky,
             outcome = 'flaky' or burned_in_flaky
               or coalesce(outcome <> 'flaky' and sha is not null and before in ('passed', 'failed') and before <> outcome, false) as flaky
      from (
        select r.id, r.environment_id, r.day, r.sha, t.test_case_id, t.outcome, ${burnedInFlaky(sql, 't.outcome')} as burned_in_flaky,
               lag(t.outcome) over (partition by r.environment_id, r.sha, t.test_case_id order by r.started, r.id) as before
        from (select r.id, r.environment_id, coalesce(r.run_started_at, r.created_at) as started,
                     (coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date as day, ${commitOf(sql, 'r')} as sha
              from test_runs r
              where r.project_id = ${projectId} and ${counted(sql, 'r')}
                and ${afterHorizon("(coalesce(r.run_started_at, r.created_at) at time zone 'UTC')::date")}) r
        join test_results t on t.test_run_id = r.id and t.is_final and t.outcome in ('passed', 'failed', 'flaky')
        left join burn_in_results b on b.test_run_id = r.id and b.test_case_id = t.test_case_id
      ) ordered
    ) o
    group by environment_id, day, test_case_id
    order by environment_id, day, test_case_id`;
}
