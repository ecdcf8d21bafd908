import type { Tx } from '../db.ts';
import { counted } from './rollup-store.ts';
import { DEFAULT_POLICY, type FlakinessClass, type QuarantinePolicy } from './schema.ts';

// Reads of the flakiness rollup, and the one module that writes `quarantine_policies`,
// `quarantine_events` and `burn_in_results`.

/** Fewer counted runs than this in the window, and a test's class is `unknown`. */
export const MIN_RUNS = 10;

export interface FlakinessRow {
  test_case_id: string;
  environment_id: number;
  title: string;
  file_path: string;
  runner_project: string;
  /** The test's owners (CODEOWNERS and `owner` annotations, as its last listing found them). */
  owners: string[];
  runs_counted: number;
  flaky_runs: number;
  failed_runs: number;
  score: number;
  class: FlakinessClass;
  last_flaky_run_id: number | null;
  /** That run's number in the project: what pages name it by. */
  last_flaky_run_number: number | null;
  quarantined: boolean;
}

/** Counted runs a test of class `unknown` still needs for a class of its own. */
export function runsNeeded(row: Pick<FlakinessRow, 'class' | 'runs_counted'>): number {
  return row.class === 'unknown' ? Math.max(0, MIN_RUNS - row.runs_counted) : 0;
}

export interface WindowFilter {
  environmentId?: number;
  /** One class, or any of several (the flaky tests page's "flaky or broken"). */
  class?: FlakinessClass | FlakinessClass[];
  /**
   * With `class`: the tests still `unknown` (too few runs) that were flaky or failed in a counted
   * run are listed too. A new team's tests stay unknown for ten runs; what failed meanwhile is news.
   */
  early?: boolean;
  /** A lower-case LIKE pattern matched against the test's title and file. */
  search?: string | null;
  /** The tests one owner owns (`@org/team`). */
  owner?: string | null;
  /** One test alone (its line in each environment). */
  testCaseId?: string;
  now: Date;
  limit: number;
  offset: number;
}

/** What the outer queries read of each test of a window `c`, its test case joined as `tc`. */
function presented(sql: Tx, projectId: number, now: Date) {
  return sql`
    c.test_case_id, c.environment_id, coalesce(tc.name, '') as title, coalesce(tc.file_path, '') as file_path,
    coalesce(tc.runner_project, '') as runner_project, coalesce(tc.owners, '{}') as owners, c.runs_counted, c.flaky_runs, c.failed_runs, c.score, c.class,
    c.last_flaky_run_id, (select r.number from test_runs r where r.id = c.last_flaky_run_id) as last_flaky_run_number,
    exists (select 1 from snoozes s
            where s.project_id = ${projectId} and s.snooze_until > ${now}
              and (s.scoped_to_environment_id is null or s.scoped_to_environment_id = c.environment_id)
              and s.test_ids @> array[c.test_case_id]::text[]) as quarantined`;
}

const RANKING = 'c.score desc, c.runs_counted desc, c.environment_id, c.test_case_id';

/**
 * The kept window (the last WINDOW_DAYS days; `ensureWindow` first), highest score first: read in
 * the order of its index, so a page costs the same whatever the project's size.
 */
function classFilter(sql: Tx, filter: Pick<WindowFilter, 'class' | 'early'>) {
  const wanted = filter.class;
  if (wanted === undefined) return sql``;
  const classes = Array.isArray(wanted) ? wanted : [wanted];
  if (filter.early) return sql`and (c.class = any(${classes}::text[]) or (c.class = 'unknown' and (c.flaky_runs > 0 or c.failed_runs > 0)))`;
  return sql`and c.class = any(${classes}::text[])`;
}

/** The tests whose title or file matches, found in one pass over the project's tests. */
function searchFilter(sql: Tx, projectId: number, search: string | null | undefined) {
  if (!search) return sql``;
  return sql`and c.test_case_id in (
    select found.id from test_cases found
    where found.project_id = ${projectId} and (lower(found.name) like ${search} or lower(found.file_path) like ${search}))`;
}

/** The tests one owner owns, found as the search's are. */
function ownerFilter(sql: Tx, projectId: number, owner: string | null | undefined) {
  if (!owner) return sql``;
  return sql`and c.test_case_id in (
    select owned.id from test_cases owned where owned.project_id = ${projectId} and owned.owners @> ${[owner]}::text[])`;
}

export async function keptWindow(sql: Tx, projectId: number, filter: WindowFilter): Promise<{ rows: FlakinessRow[]; total: number }> {
  const where = sql`c.project_id = ${projectId}
    ${filter.environmentId !== undefined ? sql`and c.environment_id = ${filter.environmentId}` : sql``}
    ${classFilter(sql, filter)} ${searchFilter(sql, projectId, filter.search)} ${ownerFilter(sql, projectId, filter.owner)}
    ${filter.testCaseId !== undefined ? sql`and c.test_case_id = ${filter.testCaseId}` : sql``}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from flakiness_window c where ${where}`;
  const rows = await sql<FlakinessRow[]>`
    select ${presented(sql, projectId, filter.now)}
    from flakiness_window c
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = c.test_case_id
    where ${where}
    order by ${sql.unsafe(RANKING)}
    limit ${filter.limit} offset ${filter.offset}`;
  return { rows, total: count?.total ?? 0 };
}

/** How many tests the kept window counts runs for, and the most runs counted for one: why a list may be empty. */
export async function keptWindowSize(sql: Tx, projectId: number, environmentId: number | undefined): Promise<{ tests: number; mostRuns: number }> {
  const [size] = await sql<{ tests: number; most_runs: number }[]>`
    select count(*)::int as tests, coalesce(max(runs_counted), 0)::int as most_runs from flakiness_window
    where project_id = ${projectId} and runs_counted > 0 ${environmentId !== undefined ? sql`and environment_id = ${environmentId}` : sql``}`;
  return { tests: size?.tests ?? 0, mostRuns: size?.most_runs ?? 0 };
}

/**
 * Any other window, summed from the daily rows: its class is the one the kept window's generated
 * column gives (test/flaky/flaky.test.ts holds them equal).
 */
export async function summedWindow(sql: Tx, projectId: number, since: string, filter: WindowFilter): Promise<{ rows: FlakinessRow[]; total: number }> {
  const rows = await sql<(FlakinessRow & { total: number })[]>`
    with w as (
      select environment_id, test_case_id, sum(counted_runs)::int as runs_counted, sum(flaky_runs)::int as flaky_runs,
             sum(failed_runs)::int as failed_runs, max(last_flaky_run_id) as last_flaky_run_id, sum(burned_in_flaky)::int as burned_in_flaky
      from daily_test_flakiness
      where project_id = ${projectId} and day >= ${since}::date
        ${filter.environmentId !== undefined ? sql`and environment_id = ${filter.environmentId}` : sql``}
      group by environment_id, test_case_id
    ), c as (
      select w.*, w.flaky_runs::float8 / w.runs_counted as score,
             case when w.runs_counted < ${MIN_RUNS} and w.burned_in_flaky = 0 then 'unknown'
                  when w.burned_in_flaky > 0 then 'flaky'
                  when w.failed_runs = w.runs_counted then 'broken'
                  when w.flaky_runs > 0 then 'flaky'
                  else 'healthy' end as class
      from w
    )
    select ${presented(sql, projectId, filter.now)}, count(*) over ()::int as total
    from c
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = c.test_case_id
    where true ${classFilter(sql, filter)} ${searchFilter(sql, projectId, filter.search)} ${ownerFilter(sql, projectId, filter.owner)}
      ${filter.testCaseId !== undefined ? sql`and c.test_case_id = ${filter.testCaseId}` : sql``}
    order by ${sql.unsafe(RANKING)}
    limit ${filter.limit} offset ${filter.offset}`;
  return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total ?? 0 };
}

export interface DailyFlakiness {
  environment_id: number;
  test_case_id: string;
  day: string;
  counted_runs: number;
  flaky_runs: number;
}

/** Every day from `since` to `until` (YYYY-MM-DD, both included). */
function daysBetween(since: string, until: string): string[] {
  const days: string[] = [];
  for (let day = new Date(`${since}T00:00:00Z`); day.toISOString().slice(0, 10) <= until; day.setUTCDate(day.getUTCDate() + 1))
    days.push(day.toISOString().slice(0, 10));
  return days;
}

/**
 * The daily counts behind these tests' scores from `since` to `until`: what a trend is drawn from.
 * Each test's days are looked up one by one on the primary key (by day first), a few hundred
 * lookups, where a range over the days would walk every test of each day. The days are sent as an
 * array: from `generate_series` over parameters the planner expected a thousand days, and at ten
 * million results it read the whole table in parallel instead (1.5 s against 5 ms).
 */
export async function dailyFlakiness(
  sql: Tx,
  projectId: number,
  tests: { environment_id: number; test_case_id: string }[],
  since: string,
  until: string,
): Promise<DailyFlakiness[]> {
  if (tests.length === 0) return [];
  return sql<DailyFlakiness[]>`
    select d.environment_id, d.test_case_id, to_char(d.day, 'YYYY-MM-DD') as day, d.counted_runs, d.flaky_runs
    from unnest(${tests.map((t) => t.environment_id)}::int[], ${tests.map((t) => t.test_case_id)}::text[]) as given (environment_id, test_case_id)
    cross join unnest(${daysBetween(since, until)}::date[]) as days (day)
    join daily_test_flakiness d
      on d.project_id = ${projectId} and d.environment_id = given.environment_id and d.day = days.day
     and d.test_case_id = given.test_case_id collate "C"
    order by d.day`;
}

export interface EndedRun {
  id: number;
  project_id: number;
  environment_id: number;
}

export async function endedRun(sql: Tx, runId: number): Promise<EndedRun | null> {
  const [row] = await sql<EndedRun[]>`select id, project_id, environment_id from test_runs where id = ${runId}`;
  return row ?? null;
}

export async function getPolicy(sql: Tx, projectId: number): Promise<QuarantinePolicy> {
  const [row] = await sql<QuarantinePolicy[]>`
    select mode, threshold, cap_percent, expiry_days, release_after_clean_runs from quarantine_policies where project_id = ${projectId}`;
  return row ?? DEFAULT_POLICY;
}

export async function putPolicy(sql: Tx, projectId: number, policy: QuarantinePolicy, now: Date): Promise<QuarantinePolicy> {
  const [row] = await sql<QuarantinePolicy[]>`
    insert into quarantine_policies (project_id, mode, threshold, cap_percent, expiry_days, release_after_clean_runs, updated_at)
    values (${projectId}, ${policy.mode}, ${policy.threshold}, ${policy.cap_percent}, ${policy.expiry_days},
            ${policy.release_after_clean_runs}, ${now})
    on conflict (project_id) do update set
      mode = excluded.mode, threshold = excluded.threshold, cap_percent = excluded.cap_percent,
      expiry_days = excluded.expiry_days, release_after_clean_runs = excluded.release_after_clean_runs, updated_at = excluded.updated_at
    returning mode, threshold, cap_percent, expiry_days, release_after_clean_runs`;
  return row as QuarantinePolicy;
}

export interface NewEvent {
  environmentId: number;
  testCaseId: string;
  action: 'quarantined' | 'released';
  reason: string;
  snoozeId: number | null;
  at: Date;
}

export async function recordEvent(sql: Tx, projectId: number, event: NewEvent): Promise<void> {
  await sql`
    insert into quarantine_events (project_id, environment_id, test_case_id, action, reason, snooze_id, created_at)
    values (${projectId}, ${event.environmentId}, ${event.testCaseId}, ${event.action}, ${event.reason}, ${event.snoozeId}, ${event.at})`;
}

export interface EventRow {
  test_case_id: string;
  environment_id: number;
  action: 'quarantined' | 'released';
  reason: string;
  snooze_id: number | null;
  created_at: Date;
}

export async function listEvents(
  sql: Tx,
  projectId: number,
  filter: { environmentId?: number; limit: number; offset: number },
): Promise<{ rows: EventRow[]; total: number }> {
  const where = sql`project_id = ${projectId} ${filter.environmentId !== undefined ? sql`and environment_id = ${filter.environmentId}` : sql``}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from quarantine_events where ${where}`;
  const rows = await sql<EventRow[]>`
    select test_case_id, environment_id, action, reason, snooze_id, created_at
    from quarantine_events where ${where} order by id desc limit ${filter.limit} offset ${filter.offset}`;
  return { rows, total: count?.total ?? 0 };
}

/** The policy's quarantines still in force in an environment: its active auto snoozes, one test each. */
export async function activeQuarantines(
  sql: Tx,
  projectId: number,
  environmentId: number,
  now: Date,
): Promise<{ snooze_id: number; test_case_id: string; since: Date }[]> {
  return sql<{ snooze_id: number; test_case_id: string; since: Date }[]>`
    select id as snooze_id, test_ids[1] as test_case_id, created_at as since
    from snoozes
    where project_id = ${projectId} and source = 'auto' and scoped_to_environment_id = ${environmentId} and snooze_until > ${now}`;
}

/** Auto snoozes that ran out by their date with no release recorded yet. */
export async function expiredUnreleased(
  sql: Tx,
  projectId: number,
  now: Date,
): Promise<{ snooze_id: number; test_case_id: string; environment_id: number; expired_at: Date }[]> {
  return sql<{ snooze_id: number; test_case_id: string; environment_id: number; expired_at: Date }[]>`
    select s.id as snooze_id, s.test_ids[1] as test_case_id, s.scoped_to_environment_id as environment_id, s.snooze_until as expired_at
    from snoozes s
    where s.project_id = ${projectId} and s.source = 'auto' and s.snooze_until <= ${now} and s.scoped_to_environment_id is not null
      and not exists (select 1 from quarantine_events e where e.snooze_id = s.id and e.action = 'released')`;
}

/** The test's last `count` counted outcomes in the environment since `since`, newest first. */
export async function outcomesSince(sql: Tx, environmentId: number, testCaseId: string, since: Date, count: number): Promise<string[]> {
  const rows = await sql<{ outcome: string }[]>`
    select t.outcome
    from test_runs r join test_results t on t.test_run_id = r.id and t.test_case_id = ${testCaseId} and t.is_final
    where r.environment_id = ${environmentId} and coalesce(r.run_started_at, r.created_at) >= ${since}
      and ${counted(sql, 'r')}
      and t.outcome in ('passed', 'failed', 'flaky')
    order by coalesce(r.run_started_at, r.created_at) desc, r.id desc
    limit ${count}`;
  return rows.map((row) => row.outcome);
}

/**
 * Of these tests, those released since their last flaky run: a release stands until the test is
 * flaky again, whatever its score over a window that still holds the runs before.
 */
export async function releasedSinceLastFlaky(
  sql: Tx,
  projectId: number,
  environmentId: number,
  tests: { test_case_id: string; last_flaky_run_id: number }[],
): Promise<Set<string>> {
  if (tests.length === 0) return new Set();
  const rows = await sql<{ test_case_id: string }[]>`
    select c.test_case_id
    from unnest(${tests.map((t) => t.test_case_id)}::text[], ${tests.map((t) => t.last_flaky_run_id)}::int[]) as c (test_case_id, run_id)
    join test_runs r on r.id = c.run_id
    where exists (select 1 from quarantine_events e
                  where e.project_id = ${projectId} and e.environment_id = ${environmentId} and e.test_case_id = c.test_case_id
                    and e.action = 'released' and e.created_at >= coalesce(r.run_ended_at, r.created_at))`;
  return new Set(rows.map((row) => row.test_case_id));
}

/** How many tests the environment's last complete run had (what the cap is a share of); 0 without one. */
export async function lastCompleteRunSize(sql: Tx, environmentId: number): Promise<number> {
  const [row] = await sql<{ total_count: number }[]>`
    select total_count from test_runs
    where environment_id = ${environmentId} and state in ('passed', 'failed') and run_ended_at is not null
    order by run_ended_at desc limit 1`;
  return row?.total_count ?? 0;
}

/** What a run's burn-in found: of each new test's repeats, how many passed. Recorded once. */
export async function recordBurnIn(sql: Tx, runId: number, tests: { id: string; repeats: number; passed: number }[]): Promise<void> {
  if (tests.length === 0) return;
  await sql`
    insert into burn_in_results (test_run_id, test_case_id, repeats, passed)
    select ${runId}, id, repeats, passed
    from unnest(${tests.map((t) => t.id)}::text[], ${tests.map((t) => t.repeats)}::int[], ${tests.map((t) => t.passed)}::int[]) as given (id, repeats, passed)
    on conflict (test_run_id, test_case_id) do nothing`;
}
