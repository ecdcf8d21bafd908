-- A destination's URL is taken for a credential as a whole: Discord, Mattermost, Microsoft Teams and
-- Rocket.Chat keep theirs in the path. The audit trail records destinations as the API shows them,
-- which showed a webhook URL's path and query until now: those recorded before keep the scheme and
-- host alone, as the API shows them from now on (server/src/notifications/masking.ts). A Slack URL
-- of Slack's own hosts was masked already and stays as it is.
create function pg_temp.masked_destination(destination jsonb) returns jsonb language sql immutable as $$
  select case
    when destination is null or jsonb_typeof(destination) <> 'object' or jsonb_typeof(destination -> 'url') is distinct from 'string' then destination
    when destination ->> 'type' = 'slack' and destination ->> 'url' ~* '^https?://hooks\.slack(-gov)?\.com/' then destination
    else jsonb_set(destination, '{url}', to_jsonb(regexp_replace(destination ->> 'url', '^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*@)?([^/?#]*).*$', '\1\3/••••')))
  end
$$;

update audit_events
set before = pg_temp.masked_destination(before), after = pg_temp.masked_destination(after)
where action like 'destination.%';
