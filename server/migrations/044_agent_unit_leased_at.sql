-- When a unit was leased (not when its lease was last extended): a batch's work left is its
-- estimate less the time since, which sizes the batches of agents that lease while others run.
alter table test_run_units add column leased_at timestamptz;
