-- A shard's begin goes to the database in one write, its COMMIT with it, so that no transaction
-- waits on the server between its statements while it holds the run's row (2,000 shards beginning
-- at once queued behind such waits: issue 53). Its first statement locks the run as a result batch
-- does (key share) and refuses a run that cannot take the shard by raising an error: the
-- transaction is then aborted, every write after it fails, and the COMMIT sent with them rolls
-- back. The error's SQLSTATE says which refusal it is (PRNF0: no such run in the project; PREN0:
-- the run has ended, its state in DETAIL; PRSH0: no such shard, the run's shard count in DETAIL),
-- and the server maps it to its own error; the ended states are states.ts's TERMINAL_STATES.
create function open_run_for_shard(p_project integer, p_run integer, p_shard integer) returns integer
language plpgsql as $$
declare
  found_run record;
begin
  select number, state, total_shards into found_run from test_runs
  where project_id = p_project and id = p_run for key share;
  if not found then
    raise exception 'test run not found' using errcode = 'PRNF0';
  end if;
  if found_run.state in ('passed', 'failed', 'error', 'cancelled') then
    raise exception 'test run % is already %', p_run, found_run.state using errcode = 'PREN0', detail = found_run.state;
  end if;
  if p_shard > found_run.total_shards then
    raise exception 'this run has % shard(s)', found_run.total_shards using errcode = 'PRSH0', detail = found_run.total_shards::text;
  end if;
  return found_run.number;
end
$$;
