import { randomUUID } from 'node:crypto';
import cluster from 'node:cluster';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Clock } from './context.ts';
import { Executor } from './executor/executor.ts';
import { SyncWorker } from './executor/sync.ts';
import { type Database, isPglite, openDatabase } from './db.ts';
import { seedDemo } from './demo.ts';
import { migrate } from './migrate.ts';
import { startSweeper } from './executor/sweeper.ts';
import { serveApp, type Serving } from './serving.ts';
import { resolveSigningSecret } from './system/store.ts';
import { forkHttpWorkers, startHttpWorker } from './workers.ts';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `auto` takes a process per core up to this: past it the database is the limit, not parsing. */
const MAX_AUTO_HTTP_WORKERS = 8;

/**
 * How many processes serve HTTP. PGlite runs one query at a time for every process, so on the
 * embedded database one serves, whatever was asked.
 */
async function httpWorkerCount(config: Config, database: Database, logger: Logger): Promise<number> {
  const asked = config.httpWorkers === 'auto' ? Math.min(os.availableParallelism(), MAX_AUTO_HTTP_WORKERS) : config.httpWorkers;
  if (asked === 1 || !(await isPglite(database.sql))) return asked;
  if (config.httpWorkers !== 'auto') logger.warn({ asked }, 'PROCTOR_HTTP_WORKERS: the embedded database serves one process, so this one serves HTTP');
  return 1;
}

/**
 * Opens the database, migrates, seeds the demo on an empty database, and serves: from this
 * process, or from HTTP workers while this one keeps the sweeper and the executor.
 */
export async function startServer(config: Config, logger: Logger, clock: Clock = () => new Date()): Promise<RunningServer> {
  if (cluster.isWorker) {
    const worker = await startHttpWorker(config, logger, clock);
    return { url: `http://127.0.0.1:${worker.port}`, port: worker.port, close: worker.close };
  }
  // Traversable by the user that runs suites, which reaches its own folders below; listable by no one else.
  fs.mkdirSync(config.dataDir, { recursive: true });
  fs.chmodSync(config.dataDir, 0o711);
  const database = await openDatabase(config);
  let serving: Serving | null = null;
  try {
    const applied = await migrate(database.sql);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    const signingSecret = await resolveSigningSecret(database.sql, config.signingSecret);
    // The executor needs the port the server gets; the API reaches it through this handle.
    let executor: Executor | null = null;
    let syncs: SyncWorker | null = null;
    const jobs = { stopRun: async (runId: number) => executor?.stopRun(runId), syncRequested: () => syncs?.wake() };
    const httpWorkers = await httpWorkerCount(config, database, logger);
    serving =
      httpWorkers > 1
        ? await forkHttpWorkers(httpWorkers, config.dbPoolMax, logger, jobs)
        : await serveApp(config, { sql: database.sql, logger, clock, signingSecret, jobs });
    const { port } = serving;
    logger.info({ port, embedded: database.embedded, http_workers: httpWorkers }, 'listening');
    if (config.demo) await seedDemo(database.sql, config, port);
    const sweeper = startSweeper(database.sql, clock, logger, {
      intervalMs: config.sweepIntervalMs,
      shardTimeoutMs: config.shardTimeoutMs,
      lostRunMs: config.executor.lostRunMs,
      scheduleWindowMs: Math.max(2 * config.sweepIntervalMs, 5000),
    });
    if (config.executor.concurrency > 0) {
      const workerId = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
      executor = new Executor(database.sql, clock, logger, {
        workerId,
        concurrency: config.executor.concurrency,
        pollMs: config.executor.pollMs,
        heartbeatMs: config.executor.heartbeatMs,
        runTimeoutMs: config.executor.runTimeoutMs,
        workRoot: path.join(config.dataDir, 'work'),
        reporterUrl: `http://127.0.0.1:${port}`,
        runnerUser: config.runnerUser,
      });
      executor.start();
      syncs = new SyncWorker(database.sql, clock, logger, {
        workerId,
        pollMs: config.executor.pollMs,
        heartbeatMs: config.executor.heartbeatMs,
        lostMs: config.executor.lostRunMs,
        workRoot: path.join(config.dataDir, 'work'),
        runnerUser: config.runnerUser,
      });
      syncs.start();
    }

    const served = serving;
    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // Stop accepting, let in-flight requests finish, then close the database.
        const stopped = served.close();
        await Promise.all([executor?.stop(), syncs?.stop()]);
        await stopped;
        await sweeper.stop();
        await database.close();
      })());
    return { url: `http://127.0.0.1:${port}`, port, close };
  } catch (error) {
    await serving?.close();
    await database.close();
    throw error;
  }
}
