-- The repositories an instance admin bound to a project: the only ones the server's own
-- credentials (its GitHub App, its GitLab token) act on for that project's notifications. A
-- destination with a token of the project's own is not limited by them. `name` is a GitHub
-- repository's owner/name, or a GitLab project's path or id, as a destination names it; compared
-- without regard to case, as both hosts do.
create table repository_bindings (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  host text not null check (host in ('github', 'gitlab')),
  name text not null,
  created_by text references users (id) on delete set null,
  created_at timestamptz not null
);
create unique index repository_bindings_name on repository_bindings (project_id, host, lower(name));
