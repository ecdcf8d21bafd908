-- Every report and upload rewrites the rows of the tests it lists (last seen commit, updated at),
-- none of whose indexed columns change. Room left in each page lets PostgreSQL keep those updates
-- on the page (HOT: no index touched), which halves their cost at 100,000 tests. Pages written
-- from now on keep the room; older ones as they are rewritten.
alter table test_cases set (fillfactor = 45);
