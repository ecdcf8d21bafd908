-- Runs spread over agents: machines that join a run and pull its units of work (a spec file, or one
-- test of a fully parallel file, for one runner project), longest first. A unit is reported as the
-- run's shard of the same number, so a run of N units has total_shards N and ends as any run does,
-- when its last shard ends; a unit is done when its shard has ended.
alter table test_runs add column distribution text not null default 'shards' check (distribution in ('shards', 'agents'));
alter table test_runs drop constraint test_runs_origin_check;
alter table test_runs add constraint test_runs_origin_check check (origin in ('api', 'schedule', 'reporter', 'agent'));
-- The commit every agent checks out: the first agent's, whose checkout planned the units.
alter table test_runs add column planned_at timestamptz;

create table test_run_agents (
  id integer generated always as identity primary key,
  test_run_id integer not null references test_runs (id) on delete cascade,
  name text not null,
  joined_at timestamptz not null,
  last_seen_at timestamptz not null
);
create index test_run_agents_run on test_run_agents (test_run_id);

create table test_run_units (
  test_run_id integer not null references test_runs (id) on delete cascade,
  unit integer not null check (unit >= 1),
  runner_project text not null,
  -- Relative to the config's rootDir, as `--test-list` names it.
  file text not null,
  -- `--test-list` lines of the unit's tests (every test of the file for a whole-file unit).
  tests text[] not null,
  test_ids text[] not null,
  -- From the environment's history: the sum of its tests' latest durations; null when none is known.
  estimate_ms integer,
  agent_id integer references test_run_agents (id) on delete set null,
  leased_until timestamptz,
  leases integer not null default 0,
  primary key (test_run_id, unit)
);
