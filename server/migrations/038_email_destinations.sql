-- Email destinations: a run's ending mailed to a list of addresses (sent through PROCTOR_SMTP_URL).
-- `recipients` is set for email destinations alone, which have no url, repository or project.
alter table notification_destinations add column recipients text[];
alter table notification_destinations drop constraint notification_destinations_type_check;
alter table notification_destinations drop constraint notification_destinations_check;
alter table notification_destinations add constraint notification_destinations_type_check check (type in ('slack', 'webhook', 'github', 'gitlab', 'email'));
alter table notification_destinations add constraint notification_destinations_check check (
  (type = 'github') = (repo is not null)
  and (type = 'gitlab') = (gitlab_project is not null)
  and (type = 'email') = (recipients is not null)
  and (type in ('slack', 'webhook')) = (url is not null)
);
