// Several processes serving HTTP on one port (node:cluster). Parsing and validating request bodies
// is most of a busy server's CPU, and one Node process uses one core; the primary keeps what must
// run once (migrations, the sweeper, the executor) and the workers serve the API.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Clock, JobControl } from './context.ts';
import { openDatabase } from './db.ts';
import { answerMetricsRequests, collectProcessMetrics } from './metrics.ts';
import { serveApp, type Serving } from './serving.ts';
import { resolveSigningSecret } from './system/store.ts';

/** A worker asks the primary, whose executor runs the run, to stop it now (heartbeats would in time). */
interface StopRunMessage {
  type: 'stop-run';
  runId: number;
  /** The id of the request that asked, for the primary's log. */
  requestId?: string;
}
/** A worker tells the primary, whose jobs do the work, that a sync was requested or a run ended. */
interface NudgeMessage {
  type: 'sync-requested' | 'run-ended';
}
interface ShutdownMessage {
  type: 'shutdown';
}

const RESTART_DELAY_MS = 1000;
const SHUTDOWN_GRACE_MS = 30_000;

function isStopRun(message: unknown): message is StopRunMessage {
  return (message as StopRunMessage)?.type === 'stop-run' && Number.isInteger((message as StopRunMessage).runId);
}

/**
 * Forks `count` workers that serve the API on the configured port and resolves once all of them
 * listen. They share `dbPoolMax` connections (two each at least). A worker that dies is replaced;
 * `close` lets each finish the requests under way.
 */
export async function forkHttpWorkers(count: number, dbPoolMax: number, logger: Logger, jobs: JobControl): Promise<Serving> {
  const env = { PROCTOR_DB_POOL_MAX: String(Math.max(2, Math.ceil(dbPoolMax / count))) };
  let closing: Promise<void> | null = null;

  function fork(): Promise<number> {
    const worker = cluster.fork(env);
    worker.on('message', (message: unknown) => {
      if (isStopRun(message))
        jobs
          .stopRun(message.runId, message.requestId)
          .catch((error: unknown) => logger.warn({ err: error, run_id: message.runId, request_id: message.requestId }, 'stopping a run failed'));
      if ((message as NudgeMessage)?.type === 'sync-requested') jobs.syncRequested();
      if ((message as NudgeMessage)?.type === 'run-ended') jobs.runEnded();
    });
    let listened = false;
    const listening = new Promise<number>((resolve, reject) => {
      worker.once('listening', (address) => {
        listened = true;
        resolve(address.port);
      });
      worker.once('exit', (code) => reject(new Error(`an HTTP worker exited (code ${code}) before it listened`)));
    });
    worker.once('exit', (code, signal) => {
      // One that never listened failed to start (its error is on stderr): starting another would loop.
      if (closing || !listened) return;
      logger.error({ pid: worker.process.pid, code, signal }, 'HTTP worker exited; starting another');
      setTimeout(() => {
        if (!closing) fork().catch((error: unknown) => logger.error({ err: error }, 'restarting an HTTP worker failed'));
      }, RESTART_DELAY_MS);
    });
    return listening;
  }

  function stopAll(): Promise<void> {
    // Node keeps a worker in cluster.workers until it has both exited and disconnected.
    const running = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
    const exits = running.map(
      (worker) =>
        new Promise<void>((resolve) => {
          const kill = setTimeout(() => worker.process.kill('SIGKILL'), SHUTDOWN_GRACE_MS);
          worker.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          // A worker whose channel is already gone is on its way out: the exit above still comes.
          worker.send({ type: 'shutdown' } satisfies ShutdownMessage, (error: Error | null) => error && worker.process.kill('SIGTERM'));
        }),
    );
    return Promise.all(exits).then(() => undefined);
  }

  try {
    const ports = await Promise.all(Array.from({ length: count }, fork));
    return { port: ports[0] as number, close: () => (closing ??= stopAll()) };
  } catch (error) {
    await (closing ??= stopAll());
    throw error;
  }
}

/**
 * A cluster worker: the API on its own connections to the database, until the primary says to
 * shut down (or goes away: Node ends a worker whose primary is gone).
 */
export async function startHttpWorker(config: Config, logger: Logger, clock: Clock): Promise<Serving> {
  // The primary serves the node's metrics, its workers' added to its own: each worker tells it its.
  if (config.metrics) {
    collectProcessMetrics();
    answerMetricsRequests();
  }
  const database = await openDatabase(config);
  try {
    const signingSecret = await resolveSigningSecret(database.sql, config.signingSecret);
    const serving = await serveApp(config, {
      sql: database.sql,
      logger,
      clock,
      signingSecret,
      jobs: {
        stopRun: async (runId, requestId) => void process.send?.({ type: 'stop-run', runId, requestId } satisfies StopRunMessage),
        syncRequested: () => void process.send?.({ type: 'sync-requested' } satisfies NudgeMessage),
        runEnded: () => void process.send?.({ type: 'run-ended' } satisfies NudgeMessage),
      },
    });
    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        await serving.close();
        await database.close();
      })());
    process.on('message', (message: unknown) => {
      if ((message as ShutdownMessage)?.type === 'shutdown') void close().then(() => process.exit(0));
    });
    return { port: serving.port, close };
  } catch (error) {
    await database.close();
    throw error;
  }
}
