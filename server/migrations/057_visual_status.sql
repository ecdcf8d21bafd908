-- The `proctor/visual` commit status of a run with visual changes, per GitHub or GitLab destination
-- of its project: pending while changes await review, success once all are approved, failure when
-- one is rejected. A later review replaces the state to send (one row per destination and run).
create table visual_status_deliveries (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  destination_id integer not null references notification_destinations (id) on delete cascade,
  test_run_id integer not null references test_runs (id) on delete cascade,
  state text not null check (state in ('pending', 'success', 'failure')),
  description text not null,
  attempts integer not null default 0,
  last_error text,
  -- null: sent, or given up on.
  next_attempt_at timestamptz,
  queued_at timestamptz not null,
  delivered_at timestamptz,
  unique (destination_id, test_run_id)
);
create index visual_status_deliveries_due on visual_status_deliveries (next_attempt_at) where next_attempt_at is not null;
