create table environments (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  slug text not null,
  name text not null,
  runner_projects_match text[] not null default '{}',
  runner_projects_ignore text[] not null default '{}',
  is_disabled boolean,
  env_files text[] not null default '{}',
  scheduled_trigger text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, slug)
);

create table snoozes (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  test_ids text[] not null,
  snooze_until timestamptz not null,
  description text,
  created_from_test_run_id integer,
  created_by text references users (id) on delete set null,
  scoped_to_environment_id integer references environments (id) on delete cascade,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index snoozes_project_until on snoozes (project_id, snooze_until);
create index snoozes_test_ids on snoozes using gin (test_ids);

create table resources (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  name text not null,
  description text,
  mime_type text,
  size_bytes bigint,
  external_url text,
  access_level text check (access_level in ('read_write', 'read', 'none')),
  status text not null check (status in ('pending', 'uploaded')),
  storage_key text,
  stored_bytes bigint,
  created_by text references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index resources_project on resources (project_id, id);

-- The runner's 41-character test id is unique within a project.
create table test_cases (
  project_id integer not null references projects (id) on delete cascade,
  id text collate "C" not null,
  name text not null,
  file_path text not null,
  suites text[] not null default '{}',
  runner_project text not null,
  tags text[] not null default '{}',
  -- Set by PUT /api/test-cases/{id}/tags: runs then leave the tags as they were set.
  tags_set_by_hand boolean not null default false,
  line integer,
  "column" integer,
  is_active boolean not null default true,
  first_seen_commit_sha text,
  last_seen_commit_sha text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, id)
);
create index test_cases_file on test_cases (project_id, file_path text_pattern_ops);
create index test_cases_tags on test_cases using gin (tags);
