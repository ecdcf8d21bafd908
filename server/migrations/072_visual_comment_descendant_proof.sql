-- The pull/merge request comment's line on a run's visual changes (issue 57, point 2): written by
-- the visual review with each `proctor/visual` status it queues (counts by review, and the proof of
-- committed baselines), and read when the run's comment section is written. Null: no line yet.
alter table visual_status_deliveries add column comment_line text;

-- A later run on a commit descending from the baseline commit proves it too (point 4): the last
-- later run of the environment and branch already found not to hold the baselines, so that each
-- run's ancestry is looked up once. Null: none yet.
alter table baseline_commits add column proof_checked_run_id integer references test_runs (id) on delete set null;
