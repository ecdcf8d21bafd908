-- Each test's running total of its executions' durations (ms; skipped ones left out), beside its
-- counts: a window's mean duration is the difference of two snapshots, as its rates are. Rows
-- written before this hold 0 until `proctor analytics rebuild` sums them from the results.
alter table test_case_cumulative add column duration_sum bigint not null default 0;
