-- The pull or merge request a reported run's CI build is for, as the reporter reads it from the
-- CI's variables (or PROCTOR_PULL_REQUEST).
alter table test_runs add column pull_request integer check (pull_request > 0);
