-- Runs are numbered per project: a project's first run is #1, whatever other projects ran. Pages,
-- notifications and MCP name a run by its number; URLs and the API keep its id.
alter table projects add column last_run_number integer not null default 0;
alter table test_runs add column number integer;

-- Existing runs, numbered in the order they were made (their ids).
update test_runs r set number = n.number
from (select id, row_number() over (partition by project_id order by id)::integer as number from test_runs) n
where r.id = n.id;
update projects p set last_run_number = coalesce((select max(r.number) from test_runs r where r.project_id = p.id), 0);

alter table test_runs alter column number set not null;
create unique index test_runs_project_number on test_runs (project_id, number);

-- Each new run takes the next number of its project's counter, in the transaction that inserts it.
-- Why a counter on the project's row, taken in a trigger, rather than max(number) + 1: the row's
-- lock makes two runs of one project made at the same time wait for each other (the second reads
-- the counter the first committed), where two max() reads could both see the same largest number;
-- and it costs one row, not a scan of the project's runs. Why a trigger: every way a run is made
-- (a report, an upload, an agent, a trigger, a schedule, a rerun) gets its number the same way,
-- in the same statement. The lock is `for no key update`, which rows that reference the project
-- (results, environments) do not wait for; only runs of the same project made at once wait.
create function assign_run_number() returns trigger language plpgsql as $$
begin
  -- A restore writes the numbers the backup holds.
  if new.number is not null then
    return new;
  end if;
  perform 1 from projects where id = new.project_id for no key update;
  -- A run its run key (or its schedule's tick) already made: the insert meets its conflict and
  -- does nothing, and spends no number (a CI's four shards make one run, #N, not #N to #N+3).
  -- Read after the lock, so a run made by a transaction that held it is seen.
  if (new.run_key is not null and exists (select 1 from test_runs where project_id = new.project_id and run_key = new.run_key))
     or (new.scheduled_for is not null and exists (select 1 from test_runs where environment_id = new.environment_id and scheduled_for = new.scheduled_for)) then
    new.number := 0;
    return new;
  end if;
  update projects set last_run_number = last_run_number + 1 where id = new.project_id returning last_run_number into new.number;
  return new;
end
$$;

create trigger test_runs_number before insert on test_runs for each row execute function assign_run_number();
