-- A change made with the `proctor` command is recorded with the operating system's user who ran it
-- (actor_kind 'cli', actor_id the user name), no longer as the anonymous system.
alter table audit_events drop constraint audit_events_actor_kind_check;
alter table audit_events add constraint audit_events_actor_kind_check check (actor_kind in ('user', 'key', 'system', 'cli'));
