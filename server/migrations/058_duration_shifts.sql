-- Tests that got slower: one row per test and environment while its passed durations show a
-- slowdown (server/src/durations/shift.ts decides), written when a run is rolled up, removed when
-- the slowdown is no longer seen (the test came back, or its slower duration became the look-back's
-- normal). The run where it started is kept by number as well, so that a deleted run still says
-- which it was.
create table duration_shifts (
  project_id integer not null references projects (id) on delete cascade,
  environment_id integer not null references environments (id) on delete cascade,
  test_case_id text collate "C" not null,
  started_run_id integer references test_runs (id) on delete set null,
  started_run_number integer not null,
  baseline_ms integer not null,
  recent_ms integer not null,
  z double precision not null,
  runs_counted integer not null,
  detected_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (project_id, environment_id, test_case_id)
);
create index duration_shifts_project_rise on duration_shifts (project_id, ((recent_ms - baseline_ms)::float8 / greatest(baseline_ms, 1)) desc);
