-- Attachments of test attempts (screenshots, videos, traces, files a test attaches). Bytes are
-- stored once per project by their sha256: a blob row is made when they are first declared, and
-- gets its storage key once they arrived whole and hashed to that sha256.
create table artifact_blobs (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  size_bytes bigint not null check (size_bytes >= 0),
  storage_key text,
  stored_at timestamptz,
  created_at timestamptz not null,
  unique (project_id, sha256)
);

-- One attachment of one attempt; declaring it again changes nothing.
create table test_attachments (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  test_run_id integer not null references test_runs (id) on delete cascade,
  test_case_id text not null,
  retry integer not null check (retry >= 0),
  name text not null,
  content_type text not null,
  blob_id bigint not null references artifact_blobs (id),
  created_at timestamptz not null,
  unique (test_run_id, test_case_id, retry, name, blob_id)
);
create index test_attachments_blob on test_attachments (blob_id);
