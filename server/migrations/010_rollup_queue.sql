-- A run's rollup is written by a job right after its end, not inside the request that ends it: a
-- run of 100,000 tests reported late moves every later day's snapshot, seconds of work. Each
-- ended run waits here until a job has added it to the rollups, in the same transaction that
-- removes it.
create table rollup_queue (
  test_run_id integer primary key references test_runs (id) on delete cascade,
  project_id integer not null,
  queued_at timestamptz not null
);
-- Runs that ended before this migration were rolled up as they ended.
