-- How long a project keeps its runs' details and attachments; no row: the server's defaults
-- (PROCTOR_RETENTION_RESULTS_DAYS, PROCTOR_RETENTION_ARTIFACTS_DAYS).
create table retention_policies (
  project_id integer primary key references projects (id) on delete cascade,
  results_days integer not null check (results_days >= 1),
  artifacts_days integer not null check (artifacts_days >= 1 and artifacts_days <= results_days),
  updated_at timestamptz not null
);

-- A pinned run keeps its details and attachments whatever the policy. A run whose details were
-- deleted keeps its row and counts; the rollups keep what it added to them.
alter table test_runs
  add column pinned boolean not null default false,
  add column artifacts_deleted_at timestamptz,
  add column details_deleted_at timestamptz;

-- The retention pass walks each project's runs oldest first among those it has not yet done.
create index test_runs_details_kept on test_runs (project_id, created_at, id) where details_deleted_at is null;
create index test_runs_artifacts_kept on test_runs (project_id, created_at, id) where artifacts_deleted_at is null;

-- Stored bytes whose rows are gone: written in the transaction that deletes the rows, removed from
-- the storage after it commits, and taken off this list once removed. A crash in between leaves
-- them here for the next pass: never a row without its bytes, never bytes no row leads to.
create table storage_removals (
  id bigint generated always as identity primary key,
  storage_key text not null,
  size_bytes bigint not null,
  queued_at timestamptz not null
);
