-- Likely failures first (issue 56): how the server hands a run's units out. `duration` (longest
-- first, as before) or `failures-first` (the units whose tests are likeliest to fail on this build
-- first, from the environment's history; then longest first). A run keeps the strategy its units
-- were ordered by when it was planned; null for a run whose order Playwright chose (a reporter's
-- run, static shards) or that was never planned.
alter table environments add column order_strategy text not null default 'duration'
  check (order_strategy in ('duration', 'failures-first'));
alter table test_runs add column order_strategy text check (order_strategy in ('duration', 'failures-first'));
-- A unit's place in the failures-first order, 1 for the likeliest to fail; null for a unit with no
-- sign of failing (and for every unit of a duration run): those go after, longest first.
alter table test_run_units add column risk_rank integer;
