create table test_runs (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  environment_id integer not null references environments (id) on delete cascade,
  state text not null check (state in ('pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled')),
  -- How the run came to be: 'api' (PUT /api/test-runs), 'schedule', or 'reporter' (report-only).
  origin text not null check (origin in ('api', 'schedule', 'reporter')),
  -- Report-only runs: shards of one CI build share a run through this key.
  run_key text,
  total_shards integer not null default 1 check (total_shards >= 1),
  test_run_branch text,
  build_url text,
  build_branch text,
  "commit" text,
  build jsonb,
  test_run_head_sha text,
  metadata jsonb not null default '{}',
  environment_variables_overrides jsonb not null default '[]',
  tags text[] not null default '{}',
  test_case_ids text[] not null default '{}',
  send_notifications boolean not null default true,
  rerun_source_id integer references test_runs (id) on delete set null,
  rerun_only_failed boolean not null default false,
  scm_actor text,
  total_count integer not null default 0,
  success_count integer not null default 0,
  failed_count integer not null default 0,
  skipped_count integer not null default 0,
  flaky_count integer not null default 0,
  snoozed_count integer not null default 0,
  duration integer,
  error_reason text,
  cancel_reason text,
  cancelled_by text,
  claimed_by text,
  heartbeat_at timestamptz,
  last_activity_at timestamptz,
  created_at timestamptz not null default now(),
  queued_at timestamptz,
  run_started_at timestamptz,
  run_ended_at timestamptz,
  unique (project_id, run_key)
);
create index test_runs_project_created on test_runs (project_id, id desc);
create index test_runs_environment_ended on test_runs (environment_id, run_ended_at desc) where run_ended_at is not null;
create index test_runs_pending on test_runs (id) where state = 'pending';
create index test_runs_active on test_runs (state) where state in ('queued', 'running');

create table test_run_shards (
  test_run_id integer not null references test_runs (id) on delete cascade,
  shard integer not null check (shard >= 1),
  -- Playwright's end status of the shard: passed, failed, timedout, interrupted; 'crashed' when
  -- the process ended without one. Null while the shard runs.
  status text,
  -- The shard listed its whole share of the suite (no grep, project or file filter).
  complete boolean not null default false,
  errors text[] not null default '{}',
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  primary key (test_run_id, shard)
);

-- One row per test of a run, as its shard listed it at begin.
create table test_run_tests (
  test_run_id integer not null references test_runs (id) on delete cascade,
  test_case_id text collate "C" not null,
  project_id integer not null,
  title text not null,
  file_path text not null,
  runner_project text not null,
  primary key (test_run_id, test_case_id)
);

-- Every attempt of every test, as the reporter sent it; idempotent per (run, test, retry).
-- Runner test ids are hex: byte order is their order, and "C" keeps index comparisons cheap.
create table test_results (
  test_run_id integer not null references test_runs (id) on delete cascade,
  test_case_id text collate "C" not null,
  retry integer not null,
  shard integer not null default 1,
  status text not null check (status in ('passed', 'failed', 'timedOut', 'skipped', 'interrupted')),
  duration integer not null,
  error_message text,
  error_location text,
  stdout_tail text,
  stderr_tail text,
  started_at timestamptz,
  -- The test's last attempt carries its final outcome, so a batch is one insert.
  is_final boolean not null default false,
  outcome text check (outcome in ('passed', 'failed', 'flaky', 'skipped')),
  snoozed boolean not null default false,
  total_duration integer,
  final_error_message text,
  failure_group_id text,
  primary key (test_run_id, test_case_id, retry)
);

alter table snoozes add constraint snoozes_created_from_test_run
  foreign key (created_from_test_run_id) references test_runs (id) on delete set null;
