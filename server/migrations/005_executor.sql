-- Keys the executor makes for one run's reporter; deleted when the run ends.
alter table api_keys add column test_run_id integer references test_runs (id) on delete cascade;

-- A scheduled run is made once per environment and tick, whichever server sees the tick first.
alter table test_runs add column scheduled_for timestamptz;
create unique index test_runs_one_per_tick on test_runs (environment_id, scheduled_for) where scheduled_for is not null;

-- What the last sync found in the test repository.
alter table environments add column runner_projects text[] not null default '{}';

-- How many times executors claimed the run: 1, unless something is wrong.
alter table test_runs add column executions integer not null default 0;
