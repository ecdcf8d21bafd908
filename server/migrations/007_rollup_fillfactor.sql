-- The rollups a run's end updates in place (a day's later runs, a late report) keep room on each
-- page, so that an update writes its new row version beside the old one without touching the
-- primary key (a heap-only tuple): most of the cost of ending a large run was those index writes.
alter table test_case_cumulative set (fillfactor = 60);
alter table daily_test_stats set (fillfactor = 60);
