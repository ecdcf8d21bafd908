-- Where a project's run endings are told: a Slack incoming webhook, a generic webhook (signed with
-- `secret`), or a GitHub repository (commit status and pull request comment, with `token`).
-- `secret` and `token` are write-only: the API says only whether one is set.
create table notification_destinations (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  type text not null check (type in ('slack', 'webhook', 'github')),
  url text,
  repo text,
  -- Environment slugs; empty: every environment.
  environments text[] not null default '{}',
  "when" text not null check ("when" in ('always', 'failed', 'changed')),
  secret text,
  token text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((type = 'github') = (repo is not null) and (type = 'github') = (url is null))
);
create index notification_destinations_project on notification_destinations (project_id, id);

-- The outbox: one row per destination and run, written in the transaction that ends the run, sent
-- by a job with retries. Its event id is the same at every attempt, for the receiver to drop a
-- repeat; its payload is composed at the first attempt and sent byte for byte at the next ones.
create table notification_deliveries (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  destination_id integer not null references notification_destinations (id) on delete cascade,
  test_run_id integer not null references test_runs (id) on delete cascade,
  event_id uuid not null unique,
  state text not null check (state in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  last_error text,
  payload text,
  next_attempt_at timestamptz not null,
  created_at timestamptz not null,
  delivered_at timestamptz,
  unique (destination_id, test_run_id)
);
create index notification_deliveries_due on notification_deliveries (next_attempt_at) where state = 'pending';
create index notification_deliveries_run on notification_deliveries (test_run_id);

-- The comment a GitHub destination keeps on a pull request, edited in place by later runs: one
-- section per environment, each the latest run's.
create table github_pull_comments (
  destination_id integer not null references notification_destinations (id) on delete cascade,
  pull_number integer not null,
  comment_id bigint,
  sections jsonb not null default '{}',
  primary key (destination_id, pull_number)
);
