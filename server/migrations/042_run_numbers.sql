-- Runs are numbered per project: a project's first run is #1, whatever other projects ran. Pages,
-- notifications and MCP name a run by its number; URLs and the API keep its id.
alter table test_runs add column number integer;

-- Existing runs, numbered in the order they were made (their ids).
update test_runs r set number = n.number
from (select id, row_number() over (partition by project_id order by id)::integer as number from test_runs) n
where r.id = n.id;

alter table test_runs alter column number set not null;
create unique index test_runs_project_number on test_runs (project_id, number);

-- Each project's runs take their numbers from a sequence of its own, `run_numbers_<project id>`.
-- Why a sequence, not a counter on the project's row or max(number) + 1: a sequence's next value
-- never waits for another transaction. A counter's row stays locked until the transaction that
-- made a run ends, and a JUnit upload makes its run and writes its results in one transaction, so
-- every other run of the project (a CI matrix starting at once) would wait minutes for it; two
-- max() reads could both see the same largest number. The price: a run whose transaction rolls
-- back spends its number, so numbers may skip one, as a CI's build numbers do. Why a trigger:
-- every way a run is made (a report, an upload, an agent, a trigger, a schedule, a rerun) gets its
-- number the same way, in the statement that inserts it.
create function run_number_sequence(project integer) returns text language sql immutable as $$
  select 'run_numbers_' || project
$$;

do $$
declare
  numbered record;
begin
  for numbered in select project_id, max(number) as last from test_runs group by project_id loop
    execute format('create sequence %I start with %s', run_number_sequence(numbered.project_id), numbered.last + 1);
  end loop;
end
$$;

create function assign_run_number() returns trigger language plpgsql as $$
declare
  sequence_name text := run_number_sequence(new.project_id);
begin
  -- A restore writes the numbers the backup holds.
  if new.number is not null then
    return new;
  end if;
  -- A run its run key (or its schedule's tick) already made: the insert meets its conflict and
  -- does nothing, and spends no number (a CI's four shards make one run, #N, not #N to #N+3).
  -- Inserts of one key take turns first (the unique index would make them wait for each other
  -- anyway), so the second sees the run the first made; runs of other keys do not wait.
  if new.run_key is not null then
    perform pg_advisory_xact_lock(hashtext('run_key'), hashtext(new.project_id || '/' || new.run_key));
  elsif new.scheduled_for is not null then
    perform pg_advisory_xact_lock(hashtext('scheduled_for'), hashtext(new.environment_id || '/' || new.scheduled_for::text));
  end if;
  if (new.run_key is not null and exists (select 1 from test_runs where project_id = new.project_id and run_key = new.run_key))
     or (new.scheduled_for is not null and exists (select 1 from test_runs where environment_id = new.environment_id and scheduled_for = new.scheduled_for)) then
    new.number := 0;
    return new;
  end if;
  begin
    new.number := nextval(sequence_name);
  exception when undefined_table then
    -- The project's first run, or its first after a restore: its sequence begins after the numbers
    -- its runs hold. Two first runs at once: the second waits for the first's sequence to commit.
    begin
      execute format('create sequence %I start with %s', sequence_name,
        coalesce((select max(number) from test_runs where project_id = new.project_id), 0) + 1);
    exception when duplicate_table or unique_violation then
      null;
    end;
    new.number := nextval(sequence_name);
  end;
  return new;
end
$$;

create trigger test_runs_number before insert on test_runs for each row execute function assign_run_number();
