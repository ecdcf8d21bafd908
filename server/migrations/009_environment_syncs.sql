-- A sync (checkout, install, listing) is a job: a request records it and waits on it, and a server
-- that executes runs does the work. One open job per environment, shared by every request for it.
create table environment_syncs (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  environment_id integer not null references environments (id) on delete cascade,
  state text not null check (state in ('pending', 'running', 'done', 'failed')),
  -- 'repository': the test repository, the runner or Playwright's listing refused (the caller's to
  -- mend); 'internal': anything else.
  failure text check (failure in ('repository', 'internal')),
  error text,
  test_count integer,
  claimed_by text,
  heartbeat_at timestamptz,
  requested_at timestamptz not null,
  finished_at timestamptz
);
create unique index environment_syncs_open on environment_syncs (environment_id) where state in ('pending', 'running');
create index environment_syncs_project on environment_syncs (project_id);
