-- Issue 58: digests sent on a schedule (point 4) and owners' routing rules (point 2), both through
-- the notifications outbox (docs/decisions/digest-delivery.md).

-- A destination may take no run's ending: only the digests and owners' failures routed to it.
alter table notification_destinations drop constraint notification_destinations_when_check;
alter table notification_destinations add constraint notification_destinations_when_check check ("when" in ('always', 'failed', 'changed', 'never'));

-- A daily or weekly digest of one environment, sent to a destination at an hour (and, weekly, an
-- ISO weekday: 1 Monday … 7 Sunday) of a time zone. next_due_at is the next such moment: the
-- sweepers of every server read the rows due, and the outbox's unique key below sends one.
create table digest_subscriptions (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  environment_id integer not null references environments (id) on delete cascade,
  destination_id integer not null references notification_destinations (id) on delete cascade,
  period text not null check (period in ('day', 'week')),
  hour smallint not null check (hour between 0 and 23),
  weekday smallint check (weekday between 1 and 7),
  time_zone text not null,
  next_due_at timestamptz not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((period = 'week') = (weekday is not null)),
  unique (destination_id, environment_id, period)
);
create index digest_subscriptions_project on digest_subscriptions (project_id, id);
create index digest_subscriptions_due on digest_subscriptions (next_due_at);

-- An owner (exact, or a glob with *) whose failures are also told to a destination.
create table owner_routes (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  owner text not null,
  destination_id integer not null references notification_destinations (id) on delete cascade,
  created_at timestamptz not null,
  unique (project_id, owner, destination_id)
);

-- The outbox carries three kinds: a run's ending (run), the failures of a run its owners' rules
-- route (owners: the rules' owner patterns kept, to list only theirs), and a digest (no run: its
-- subscription and the moment it was due, one row per subscription and moment).
alter table notification_deliveries add column kind text not null default 'run' check (kind in ('run', 'owners', 'digest'));
alter table notification_deliveries add column owners text[];
alter table notification_deliveries add column digest_subscription_id integer references digest_subscriptions (id) on delete cascade;
alter table notification_deliveries add column due_at timestamptz;
alter table notification_deliveries alter column test_run_id drop not null;
alter table notification_deliveries drop constraint notification_deliveries_destination_id_test_run_id_key;
alter table notification_deliveries add constraint notification_deliveries_once unique (destination_id, test_run_id, kind);
alter table notification_deliveries add constraint notification_deliveries_digest_once unique (digest_subscription_id, due_at);
alter table notification_deliveries add constraint notification_deliveries_kind_fields check (
  (kind = 'digest') = (test_run_id is null)
  and (kind = 'digest') = (digest_subscription_id is not null and due_at is not null)
  and (kind = 'owners') = (owners is not null)
);
