-- Issue trackers (GitHub Issues, GitLab issues): a failure group or a test linked to an issue, kept
-- in step with the test's outcomes on the project's default branch.

-- A project's tracker: where its issues are filed (a GitHub or GitLab notification destination,
-- whose repository and write-only credential it uses) and the rules that create and follow them.
create table tracker_settings (
  project_id integer primary key references projects (id) on delete cascade,
  destination_id integer not null references notification_destinations (id) on delete cascade,
  default_branch text not null default 'main',
  create_for_new_groups boolean not null default false,
  create_for_flaky_tests boolean not null default false,
  when_closed_failing text not null default 'reopen' check (when_closed_failing in ('reopen', 'comment')),
  passes_to_resolve integer not null default 5 check (passes_to_resolve between 1 and 1000),
  close_when_resolved boolean not null default false,
  updated_at timestamptz not null
);

-- One issue per failure group or test. `issue_key` is the tracker's own name for it (GitHub's
-- number, GitLab's iid; a Jira key or a Linear identifier would fit too): null until it is created.
create table tracker_links (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  subject_kind text not null check (subject_kind in ('failure_group', 'test')),
  subject_id text collate "C" not null,
  destination_id integer not null references notification_destinations (id) on delete cascade,
  tracker text not null check (tracker in ('github', 'gitlab')),
  origin text not null check (origin in ('created', 'linked', 'rule')),
  -- In the body of the issue Proctor creates: a retried create finds the issue its lost answer made.
  marker uuid not null unique,
  issue_key text,
  issue_url text,
  issue_state text check (issue_state in ('open', 'closed')),
  -- The closing that was commented on (when_closed_failing = 'comment'): one comment per closing.
  noted_closed_at timestamptz,
  state_read_at timestamptz,
  -- Runs of the default branch in a row where the subject passed, since it last failed.
  passes integer not null default 0,
  created_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (project_id, subject_kind, subject_id)
);

-- The trackers' outbox: what to do on a linked issue, tried until it goes through, as notification
-- deliveries are. `steps_done`: the steps that went through at an earlier attempt.
create table tracker_actions (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  link_id bigint not null references tracker_links (id) on delete cascade,
  kind text not null check (kind in ('create', 'refresh', 'failing', 'passing')),
  -- In every comment the action posts: a retry whose earlier answer was lost finds it and posts nothing.
  key uuid not null unique,
  test_run_id integer references test_runs (id) on delete set null,
  -- Composed when queued, so that every attempt posts the same text.
  payload jsonb not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  last_error text,
  steps_done text[] not null default '{}',
  next_attempt_at timestamptz not null,
  created_at timestamptz not null,
  delivered_at timestamptz
);
create index tracker_actions_due on tracker_actions (next_attempt_at, id) where state = 'pending';
-- At most one action of a kind waits per link: a run that ends while one waits adds nothing.
create unique index tracker_actions_waiting on tracker_actions (link_id, kind) where state = 'pending';

-- Runs that ended in a project with a tracker, to be followed once they are rolled up.
create table tracker_follow_queue (
  test_run_id integer primary key references test_runs (id) on delete cascade,
  project_id integer not null,
  queued_at timestamptz not null
);
