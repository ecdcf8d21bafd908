-- Jira (Cloud and Data Center) and Linear trackers. Their credentials are the tracker settings'
-- own write-only columns, not a notification destination: a Jira site or a Linear team is told of
-- no run's end, so a destination of theirs would be one that every notification path must skip.
-- A project's tracker is then a GitHub or GitLab destination (destination_id) or one of these.
alter table tracker_settings alter column destination_id drop not null;
alter table tracker_settings add column tracker text not null default 'destination' check (tracker in ('destination', 'jira', 'linear'));
-- Jira: the site's URL (https://acme.atlassian.net, or a Data Center's base URL), the project's key,
-- the issue type created; Cloud authenticates with an account's email and an API token (Basic),
-- Data Center with a personal access token (Bearer) and no email.
alter table tracker_settings add column jira_url text;
alter table tracker_settings add column jira_project text;
alter table tracker_settings add column jira_issue_type text;
alter table tracker_settings add column jira_email text;
alter table tracker_settings add column jira_token text;
-- Linear: an API key, and the team whose issues Proctor files.
alter table tracker_settings add column linear_api_key text;
alter table tracker_settings add column linear_team text;
alter table tracker_settings add constraint tracker_settings_account check (
  (tracker = 'destination') = (destination_id is not null)
  and (tracker = 'jira') = (jira_url is not null and jira_project is not null and jira_issue_type is not null and jira_token is not null)
  and (tracker = 'linear') = (linear_api_key is not null and linear_team is not null)
);

-- A Jira or Linear link has no destination: its issue is reached with the settings' credentials.
alter table tracker_links alter column destination_id drop not null;
alter table tracker_links drop constraint tracker_links_tracker_check;
alter table tracker_links add constraint tracker_links_tracker_check check (tracker in ('github', 'gitlab', 'jira', 'linear'));
alter table tracker_links add constraint tracker_links_destination check ((tracker in ('github', 'gitlab')) = (destination_id is not null));
