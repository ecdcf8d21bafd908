-- A key's name, given by whoever makes it, so that a list of keys says what each is for ("CI on
-- main", "Grafana"); null for keys made without one (and for a run's and an agent's own keys).
alter table api_keys add column name text check (name is null or length(name) between 1 and 100);
