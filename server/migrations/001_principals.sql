create table projects (
  id integer generated always as identity primary key,
  name text not null,
  repo_url text not null,
  repo_name text not null,
  created_at timestamptz not null default now()
);

create table users (
  id text primary key,
  email text not null unique,
  name text not null,
  picture text not null default '',
  created_at timestamptz not null default now()
);

create table memberships (
  project_id integer not null references projects (id) on delete cascade,
  user_id text not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (project_id, user_id)
);

create table connected_accounts (
  id integer generated always as identity primary key,
  user_id text not null references users (id) on delete cascade,
  kind text not null check (kind in ('chat', 'scm')),
  account jsonb not null,
  created_at timestamptz not null default now()
);
create index connected_accounts_user on connected_accounts (user_id);

-- The key's id is public (it is part of the key); only a hash of the secret part is kept.
create table api_keys (
  id text primary key,
  secret_hash bytea not null,
  project_id integer references projects (id) on delete cascade,
  user_id text references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  check ((project_id is null) <> (user_id is null))
);

create table settings (
  name text primary key,
  value text not null
);
