-- Affected runs (issue 56, point 3): a triggered run made with `affected` runs only the tests that
-- Playwright finds affected by the changes since its environment's last passing run on its branch,
-- plus that run's (and later runs') failed and flaky tests. `selection` is what the run did:
-- {mode: 'affected'|'all', base_commit, reason, left_out}; null for a run that did not ask.
-- An environment's `full_run_every` turns every N-th affected run in a row into a full one.
alter table environments add column full_run_every integer check (full_run_every > 0);
alter table test_runs add column affected boolean not null default false;
alter table test_runs add column selection jsonb;
-- The last passing run of an environment on a branch, and the runs since: read when an affected run starts.
create index test_runs_environment_branch on test_runs (environment_id, test_run_branch, id desc);
