-- A unit whose Playwright crashed (it ended without its reporter ending the unit) is run once more,
-- on another agent when there is one; a second crash ends its shard `crashed`, with both reasons.
alter table test_run_units add column crashes integer not null default 0;
-- The agent the unit last crashed on, which is not given it again while another agent is active.
alter table test_run_units add column crashed_agent_id integer references test_run_agents (id) on delete set null;
alter table test_run_units add column crashed_at timestamptz;
-- Each crash's reason, prefixed with the agent it crashed on.
alter table test_run_units add column crash_errors text[] not null default '{}';

-- Playwright arguments every run Proctor executes in the environment gets (its static shards, its
-- agents' units): `--config`, `--workers`, `--retries`, … never ones that change what a unit is.
alter table environments add column playwright_args text[] not null default '{}';
