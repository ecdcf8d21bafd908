create table failure_groups (
  project_id integer not null references projects (id) on delete cascade,
  id text collate "C" not null,
  title text not null,
  status text not null default 'open' check (status in ('open', 'resolved', 'ignored')),
  diagnosis jsonb,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  last_test_run_id integer,
  member_count integer not null default 0,
  occurrence_count integer not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (project_id, id)
);
create index failure_groups_seen on failure_groups (project_id, last_seen_at desc);

-- Append-only: members are derived from these events, never updated in place.
create table failure_group_events (
  id bigint generated always as identity primary key,
  project_id integer not null,
  group_id text collate "C" not null,
  test_case_id text collate "C" not null,
  kind text not null check (kind in ('attach', 'sighting', 'detach')),
  source text not null check (source in ('machine', 'human')),
  actor_id text,
  test_run_id integer,
  environment_id integer,
  occurred_at timestamptz not null,
  foreign key (project_id, group_id) references failure_groups (project_id, id) on delete cascade
);
create index failure_group_events_member on failure_group_events (project_id, group_id, test_case_id, id);
-- One sighting per run and test (writers hold the group's row lock; this is the backstop).
create unique index failure_group_events_one_sighting on failure_group_events (project_id, group_id, test_case_id, test_run_id)
  where kind = 'sighting';
