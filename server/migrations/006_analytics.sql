-- Daily rollups, written in the transaction that ends a run: analytics never scan raw results for
-- a window. environment_id 0 is every environment of the project together.
create table daily_run_stats (
  project_id integer not null,
  environment_id integer not null,
  day date not null,
  run_count integer not null default 0,
  passed_runs integer not null default 0,
  failed_runs integer not null default 0,
  error_runs integer not null default 0,
  cancelled_runs integer not null default 0,
  rerun_count integer not null default 0,
  total_tests integer not null default 0,
  passed_tests integer not null default 0,
  failed_tests integer not null default 0,
  failed_tests_after_snooze integer not null default 0,
  flaky_tests integer not null default 0,
  primary key (project_id, environment_id, day)
);

create table daily_test_stats (
  project_id integer not null,
  environment_id integer not null,
  day date not null,
  test_case_id text collate "C" not null,
  total_runs integer not null default 0,
  pass_count integer not null default 0,
  fail_count integer not null default 0,
  flaky_count integer not null default 0,
  skip_count integer not null default 0,
  last_run_at timestamptz,
  primary key (project_id, environment_id, day, test_case_id)
);

create table daily_test_counts (
  project_id integer not null,
  environment_id integer not null,
  day date not null,
  test_count integer not null,
  primary key (project_id, environment_id, day)
);


-- Each test's running totals as of each day with runs (carried forward from the day before): a
-- window's totals are the totals at its end less those the day before it starts, two rows a test
-- whatever the window's length.
create table test_case_cumulative (
  project_id integer not null,
  environment_id integer not null,
  day date not null,
  test_case_id text collate "C" not null,
  total_runs integer not null default 0,
  pass_count integer not null default 0,
  fail_count integer not null default 0,
  flaky_count integer not null default 0,
  skip_count integer not null default 0,
  last_run_at timestamptz,
  primary key (project_id, environment_id, day, test_case_id)
);
