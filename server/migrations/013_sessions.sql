-- People signed in to the dashboard. The cookie carries the session's secret; only its sha256 is
-- kept. Each session has its own CSRF token, which every state-changing form and call must echo.
create table sessions (
  id_hash bytea primary key,
  user_id text not null references users (id) on delete cascade,
  csrf_token text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index sessions_user on sessions (user_id);
create index sessions_expires on sessions (expires_at);

-- One-time sign-in links (`proctor user login-link`): valid 15 minutes, used once.
create table login_links (
  token_hash bytea primary key,
  user_id text not null references users (id) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
