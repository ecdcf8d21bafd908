-- Microsoft Teams destinations: a run's ending posted as an Adaptive Card to a Teams Workflows
-- webhook (the "When a Teams webhook request is received" trigger), whose URL is the credential.
-- Like Slack's and webhooks', a teams destination has a url and no repository, project or recipients.
alter table notification_destinations drop constraint notification_destinations_type_check;
alter table notification_destinations drop constraint notification_destinations_check;
alter table notification_destinations add constraint notification_destinations_type_check check (type in ('slack', 'webhook', 'github', 'gitlab', 'email', 'teams'));
alter table notification_destinations add constraint notification_destinations_check check (
  (type = 'github') = (repo is not null)
  and (type = 'gitlab') = (gitlab_project is not null)
  and (type = 'email') = (recipients is not null)
  and (type in ('slack', 'webhook', 'teams')) = (url is not null)
);
