-- Teams: every membership has a role (members were all admins until now, and stay so), instance
-- admins manage projects and people everywhere, keys say who made them and when they were last
-- used, an agent's token is bound to its run and its agent, invitations bring people in by email,
-- and every change of access or configuration is an audit event.
alter table memberships add column role text not null default 'admin' check (role in ('viewer', 'member', 'admin'));
alter table memberships alter column role set default 'member';

alter table users add column is_admin boolean not null default false;

alter table api_keys add column created_by text references users (id) on delete set null;
alter table api_keys add column last_used_at timestamptz;
alter table api_keys add column agent_id integer references test_run_agents (id) on delete cascade;
alter table api_keys add constraint api_keys_agent_has_run check (agent_id is null or test_run_id is not null);

create table invitations (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  email text not null,
  role text not null check (role in ('viewer', 'member', 'admin')),
  token_hash bytea not null unique,
  created_by text references users (id) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  used_by text references users (id) on delete set null
);
create index invitations_project on invitations (project_id, created_at);

create table audit_events (
  id bigint generated always as identity primary key,
  project_id integer references projects (id) on delete cascade,
  at timestamptz not null,
  actor_kind text not null check (actor_kind in ('user', 'key', 'system')),
  actor_id text,
  actor_name text not null,
  action text not null,
  target text not null,
  before jsonb,
  after jsonb
);
create index audit_events_project_at on audit_events (project_id, at desc, id desc);
create index audit_events_project_action on audit_events (project_id, action, at desc);
