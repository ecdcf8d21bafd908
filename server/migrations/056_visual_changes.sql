-- A visual change: a screenshot assertion (toHaveScreenshot, toMatchSnapshot of an image) that
-- failed in one attempt, recognised from the attempt's attachments `<name>-expected.png`,
-- `<name>-actual.png` and `<name>-diff.png`. One row per attempt and snapshot name. The comparison
-- (size, share of changed pixels, bounding boxes) is computed by a background job: null until then.
create table visual_changes (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  test_run_id integer not null references test_runs (id) on delete cascade,
  test_case_id text collate "C" not null,
  retry integer not null check (retry >= 0),
  snapshot_name text not null,
  expected_attachment_id bigint references test_attachments (id) on delete set null,
  actual_attachment_id bigint references test_attachments (id) on delete set null,
  diff_attachment_id bigint references test_attachments (id) on delete set null,
  width integer check (width > 0),
  height integer check (height > 0),
  size_changed boolean,
  changed_pixels integer check (changed_pixels >= 0),
  changed_ratio double precision check (changed_ratio >= 0 and changed_ratio <= 1),
  -- [{x, y, width, height}] of the changed areas, largest first.
  boxes jsonb,
  threshold double precision not null default 0.2,
  compared_at timestamptz,
  -- Why the comparison could not be made (bytes that are no PNG): never retried.
  compare_error text,
  review text not null default 'pending' check (review in ('pending', 'approved', 'rejected')),
  reviewed_by text,
  reviewed_by_name text,
  reviewed_at timestamptz,
  created_at timestamptz not null,
  unique (test_run_id, test_case_id, retry, snapshot_name)
);
create index visual_changes_to_compare on visual_changes (id)
  where compared_at is null and expected_attachment_id is not null and actual_attachment_id is not null;

-- How far the job has looked through test_attachments for screenshot assertions: one row, made by
-- the job's first pass (a row written here would clash with a backup's when one is restored).
create table visual_scan (
  id integer primary key check (id = 1),
  last_attachment_id bigint not null
);
