import type { Tx } from '../db.ts';
import { InvalidInputError, NotFoundError, RunEndedError } from '../errors.ts';
import { isTerminal, type RunState } from '../states.ts';

// The one question everything that writes into a run asks first: is the run this project's, and
// still open? Below the writers of shards and results, so that their paths point one way.

export interface LockedRun {
  id: number;
  /** Its number in the project: what pages and messages name it by. */
  number: number;
  project_id: number;
  environment_id: number;
  state: RunState;
  total_shards: number;
}

/**
 * Locks the run row; results for a finished run are refused so the reporter stops. Result batches
 * and shard begins take a key-share lock: they then write side by side (their updates of the run's
 * row do not conflict with it), while completion's exclusive lock waits for them and they for it.
 */
export async function lockOpenRun(sql: Tx, projectId: number, runId: number, mode: 'exclusive' | 'batch' = 'exclusive'): Promise<LockedRun> {
  const [run] = await sql<LockedRun[]>`
    select id, number, project_id, environment_id, state, total_shards from test_runs
    where project_id = ${projectId} and id = ${runId} ${mode === 'batch' ? sql`for key share` : sql`for update`}`;
  const refusal = closedRunRefusal(run, runId);
  if (refusal) throw refusal;
  return run as LockedRun;
}

/** A run as a batch of results finds it: with its fail-fast limit, set when the run is made and never after. */
export type BatchRun = Pick<LockedRun, 'id' | 'project_id' | 'state'> & { max_failures: number | null };

/**
 * Several runs locked as a batch locks its run (key share), in the order of their ids: two groups
 * of batches that share runs take their locks in the same order, and never wait on each other in a
 * circle. Runs not found are missing from the answer.
 */
export async function lockRunsForBatches(sql: Tx, runIds: readonly number[]): Promise<BatchRun[]> {
  return sql<BatchRun[]>`
    select id, project_id, state, max_failures from test_runs where id = any(${[...runIds]}::int[]) order by id for key share`;
}

/** Why results cannot go into a run (none in the project, or ended); null when they can. */
export function closedRunRefusal(run: { state: RunState } | undefined, runId: number): NotFoundError | RunEndedError | null {
  if (!run) return new NotFoundError('test run not found');
  if (isTerminal(run.state)) return new RunEndedError(`test run ${runId} is already ${run.state}`, run.state);
  return null;
}

/**
 * The run locked for a shard's begin (key share), by a statement that fails when the run cannot
 * take the shard (migrations/051_open_run_check.sql): the begin's writes and COMMIT go out with it,
 * and the failure rolls them back. Resolves with the run's number; rejects with the refusal.
 */
export function openRunForShard(sql: Tx, projectId: number, runId: number, shard: number): Promise<number> {
  const opened = sql<{ number: number }[]>`select open_run_for_shard(${projectId}, ${runId}, ${shard}) as number`;
  return Promise.resolve(opened).then(
    ([row]) => (row as { number: number }).number,
    (error: unknown) => {
      throw shardRefusal(error, runId) ?? error;
    },
  );
}

/** The domain error of `open_run_for_shard`'s refusal, read from its SQLSTATE and detail; null for any other error. */
function shardRefusal(error: unknown, runId: number): NotFoundError | RunEndedError | InvalidInputError | null {
  const pgError = error as { code?: string; detail?: string };
  switch (pgError?.code) {
    case 'PRNF0':
      return new NotFoundError('test run not found');
    case 'PREN0':
      return new RunEndedError(`test run ${runId} is already ${pgError.detail}`, pgError.detail ?? null);
    case 'PRSH0':
      return new InvalidInputError(`path.shard: this run has ${pgError.detail} shard(s)`);
    default:
      return null;
  }
}
