-- Slack destinations by a Slack app's bot token: chat.postMessage to a channel (C…, G…) or to a
-- person (U…, W…: the app's direct message with them), which an incoming webhook, bound to one
-- channel, cannot reach. Such a slack destination has a channel and a token and no url; a slack
-- destination by incoming webhook keeps its url and has neither. Only slack destinations have a channel.
alter table notification_destinations add column slack_channel text;
alter table notification_destinations drop constraint notification_destinations_check;
alter table notification_destinations add constraint notification_destinations_check check (
  (type = 'github') = (repo is not null)
  and (type = 'gitlab') = (gitlab_project is not null)
  and (type = 'email') = (recipients is not null)
  and (slack_channel is null or (type = 'slack' and token is not null))
  and (type in ('slack', 'webhook', 'teams') and slack_channel is null) = (url is not null)
);
