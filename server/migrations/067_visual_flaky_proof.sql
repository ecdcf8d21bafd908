-- Flaky screenshots told apart from real changes (issue 57, point 5): a change whose share of
-- changed pixels stays at or under the project's noise ratio, with small diffs of the same
-- screenshot in other places in its recent runs, is noise and not offered as a baseline. Null: off.
alter table projects add column visual_noise_ratio double precision
  check (visual_noise_ratio is null or (visual_noise_ratio >= 0 and visual_noise_ratio < 1));
-- How many of the environment's runs holding the test, this one included, count as recent.
alter table projects add column visual_noise_runs integer not null default 5 check (visual_noise_runs between 2 and 50);

-- The next run proves a baseline commit (point 4): the run Proctor triggered on the new commit
-- (push path only), and the proof once the first later run on that commit ended: `passed` (every
-- approved test passed there), `failing` (one still failed), `not_run` (none of them ran).
alter table baseline_commits add column rerun_id integer references test_runs (id) on delete set null;
alter table baseline_commits add column proof_run_id integer references test_runs (id) on delete set null;
alter table baseline_commits add column proof text check (proof in ('passed', 'failing', 'not_run'));
alter table baseline_commits add column proved_at timestamptz;
create index baseline_commits_unproved on baseline_commits (id) where state = 'committed' and proof is null;
