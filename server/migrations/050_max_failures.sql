-- Fail fast: a run stops once this many of its tests have failed (failures a snooze or quarantine
-- covers do not count). An environment's limit is its runs' default; a run keeps the limit it was
-- made with (a trigger's, a reporter's, or its environment's then), so that changing the
-- environment does not stop runs already going. Null: no limit.
alter table environments add column max_failures integer check (max_failures > 0);
alter table test_runs add column max_failures integer check (max_failures > 0);
