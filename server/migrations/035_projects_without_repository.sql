-- A project that only receives reports (the reporter in CI, JUnit uploads, agents in the CI job's
-- own checkout) needs no test repository: it gets one when it is to trigger runs. And a report,
-- an upload or an agent naming an environment the project lacks makes it, unless the project's
-- admin turns that off.
alter table projects alter column repo_url drop not null;
alter table projects add column create_environments_on_first_use boolean not null default true;
