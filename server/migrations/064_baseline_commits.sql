-- Where a run's Playwright keeps its screenshot baselines, as the reporter reported it at the
-- first shard's begin: the platform (`process.platform`, Playwright's default snapshot suffix),
-- the config's folder relative to the repository's root, and per Playwright project its testDir,
-- snapshotDir (both relative to the config's folder) and its screenshot path template (null:
-- Playwright's default). What an approved image's path in the repository is computed from.
create table run_snapshot_layouts (
  test_run_id integer primary key references test_runs (id) on delete cascade,
  project_id integer not null references projects (id) on delete cascade,
  platform text not null,
  config_dir text not null,
  -- [{name, test_dir, snapshot_dir, path_template}]
  projects jsonb not null,
  created_at timestamptz not null
);

-- Whether approved baselines may be committed to the repository's default branch (false: a run
-- of the default branch has its baselines refused, and a reviewer commits them by hand).
alter table projects add column baselines_to_default_branch boolean not null default false;

-- A commit of a run's approved baselines onto its branch: queued when the review leaves nothing
-- pending and some approved image is not committed yet, made by a job (never in a request),
-- through GitHub's git data API, GitLab's commits API, or a push to the project's repository.
create table baseline_commits (
  id bigint generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  test_run_id integer not null references test_runs (id) on delete cascade,
  branch text,
  state text not null check (state in ('queued', 'committed', 'failed', 'refused')),
  -- github, gitlab or git: how it was written (null until it was).
  via text check (via in ('github', 'gitlab', 'git')),
  commit_sha text,
  commit_url text,
  -- [{change_id, path}] the files the commit wrote.
  files jsonb not null default '[]',
  error text,
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  requested_by text,
  queued_at timestamptz not null,
  finished_at timestamptz
);
create index baseline_commits_due on baseline_commits (next_attempt_at) where state = 'queued';
create index baseline_commits_run on baseline_commits (test_run_id);
-- One commit under way per run: a later approval waits for it, then is committed by the next.
create unique index baseline_commits_one_queued on baseline_commits (test_run_id) where state = 'queued';

alter table visual_changes add column baseline_commit_id bigint references baseline_commits (id) on delete set null;
