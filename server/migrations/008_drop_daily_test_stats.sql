-- Each snapshot row also counts the test's runs on the snapshot's own day (skipped ones left out),
-- from which a day's test count is kept; the per-test rows of each day were written for that alone,
-- and were half the cost of ending a large run. The rebuild keeps them in a temporary table.
alter table test_case_cumulative add column day_runs integer not null default 0;
update test_case_cumulative c set day_runs = s.total_runs
from daily_test_stats s
where s.project_id = c.project_id and s.environment_id = c.environment_id and s.day = c.day and s.test_case_id = c.test_case_id
  and s.total_runs > 0;
drop table daily_test_stats;
