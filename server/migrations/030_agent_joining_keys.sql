-- Which of a run's keys may join that run as an agent: only the one the server's executor makes to
-- serve a run of agents itself. The key a run hands its tests' reporter may not (it would mint
-- agents' tokens for whoever can read the tests' environment).
alter table api_keys add column joins_as_agent boolean not null default false;
alter table api_keys add constraint api_keys_joins_own_run check (not joins_as_agent or (test_run_id is not null and agent_id is null));
