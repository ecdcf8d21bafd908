-- What a key may do: read (GET), report (read, create runs, send results: reporters, the action,
-- agents) or admin (everything). Keys made before scopes existed could do everything: admin.
alter table api_keys add column scope text not null default 'admin' check (scope in ('read', 'report', 'admin'));
alter table api_keys alter column scope drop default;
create index api_keys_project on api_keys (project_id) where project_id is not null;
