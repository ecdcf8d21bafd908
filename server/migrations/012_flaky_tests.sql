-- Flakiness: what each counted run of an environment added to each of its tests, per day (UTC, the
-- day the run started), so that a window's score sums at most one row a test a day. A run counts
-- when it passed or failed with no more than 80% of its tests failed (an environment that was
-- down says nothing about its tests).
create table daily_test_flakiness (
  project_id integer not null,
  environment_id integer not null,
  day date not null,
  test_case_id text collate "C" not null,
  counted_runs integer not null default 0,
  -- Runs where the test passed on a retry, or flipped between pass and fail from the run before
  -- it on the same commit.
  flaky_runs integer not null default 0,
  failed_runs integer not null default 0,
  last_flaky_run_id integer,
  -- Runs where the test was new and its burn-in repeats did not all end as the run did.
  burned_in_flaky integer not null default 0,
  primary key (project_id, environment_id, day, test_case_id)
);

-- The last 14 days' sums, per test and environment, kept ready: what GET /api/flaky-tests reads by
-- default, its ranking an index. Runs add to it as they are rolled up; when the window's first day
-- moves on (`flakiness_windows.since`), it is summed again from the daily rows. The class's
-- minimum of 10 runs is server/src/flaky/store.ts's MIN_RUNS.
create table flakiness_window (
  project_id integer not null,
  environment_id integer not null,
  test_case_id text collate "C" not null,
  runs_counted integer not null,
  flaky_runs integer not null,
  failed_runs integer not null,
  last_flaky_run_id integer,
  burned_in_flaky integer not null default 0,
  score double precision generated always as (flaky_runs::float8 / greatest(runs_counted, 1)) stored,
  -- A burn-in that found the test flaky classifies it at once, under the minimum of runs too.
  class text generated always as (
    case when runs_counted < 10 and burned_in_flaky = 0 then 'unknown'
         when burned_in_flaky > 0 then 'flaky'
         when failed_runs = runs_counted then 'broken'
         when flaky_runs > 0 then 'flaky'
         else 'healthy' end) stored,
  primary key (project_id, environment_id, test_case_id)
);
create index flakiness_window_rank on flakiness_window (project_id, score desc, runs_counted desc, environment_id, test_case_id);
create index flakiness_window_environment_rank
  on flakiness_window (project_id, environment_id, score desc, runs_counted desc, test_case_id);

create table flakiness_windows (
  project_id integer primary key,
  since date not null
);

-- The run before, on the same commit of the same environment: reruns of a commit are few.
create index test_runs_environment_commit on test_runs (environment_id, (coalesce(test_run_head_sha, "commit")))
  where coalesce(test_run_head_sha, "commit") is not null;

-- Burn-in: a test seen for the first time in a triggered run of an environment with
-- burn_in_repeats is repeated that many times before the run's shards start.
alter table environments add column burn_in_repeats integer not null default 0 check (burn_in_repeats between 0 and 100);

create table burn_in_results (
  test_run_id integer not null references test_runs (id) on delete cascade,
  test_case_id text collate "C" not null,
  repeats integer not null,
  passed integer not null,
  primary key (test_run_id, test_case_id)
);

-- Snoozes made by the quarantine policy are 'auto'; people's are 'user'.
alter table snoozes add column source text not null default 'user' check (source in ('user', 'auto'));

create table quarantine_policies (
  project_id integer primary key references projects (id) on delete cascade,
  mode text not null default 'off' check (mode in ('off', 'suggest', 'auto')),
  threshold double precision not null default 0.1 check (threshold >= 0 and threshold <= 1),
  cap_percent double precision not null default 5 check (cap_percent >= 0 and cap_percent <= 100),
  expiry_days integer not null default 14 check (expiry_days >= 1),
  release_after_clean_runs integer not null default 10 check (release_after_clean_runs >= 1),
  updated_at timestamptz not null
);

-- Every quarantine and release, with its reason: the log the policy's decisions are read from.
create table quarantine_events (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  environment_id integer not null references environments (id) on delete cascade,
  test_case_id text collate "C" not null,
  action text not null check (action in ('quarantined', 'released')),
  reason text not null,
  snooze_id integer references snoozes (id) on delete set null,
  created_at timestamptz not null
);
create index quarantine_events_project on quarantine_events (project_id, id desc);
create index quarantine_events_snooze on quarantine_events (snooze_id) where snooze_id is not null;
