import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { FileStorage } from './resources/storage.ts';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import type { Clock, RunControl } from './context.ts';
import { Executor } from './executor/executor.ts';
import { openDatabase } from './db.ts';
import { seedDemo } from './demo.ts';
import { migrate } from './migrate.ts';
import { startSweeper } from './runs/sweeper.ts';
import { resolveSigningSecret } from './system/store.ts';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Opens the database, migrates, seeds the demo on an empty database, and serves. */
export async function startServer(config: Config, logger: Logger, clock: Clock = () => new Date()): Promise<RunningServer> {
  const database = await openDatabase(config);
  try {
    const applied = await migrate(database.sql);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    const signingSecret = await resolveSigningSecret(database.sql, config.signingSecret);
    const storage = new FileStorage(path.join(config.dataDir, 'files'));
    // The executor needs the port the server gets; the API reaches it through this handle.
    let executor: Executor | null = null;
    const runControl: RunControl = { stopRun: async (runId) => executor?.stopRun(runId) };
    const { app } = createApp({ sql: database.sql, config, logger, clock, signingSecret, storage, runControl });
    const httpServer = createServer(app);
    const port = await listen(httpServer, config.port, config.host);
    logger.info({ port, embedded: database.embedded }, 'listening');
    if (config.demo) await seedDemo(database.sql, config, port);
    const sweeper = startSweeper(database.sql, clock, logger, {
      intervalMs: config.sweepIntervalMs,
      shardTimeoutMs: config.shardTimeoutMs,
      lostRunMs: config.executor.lostRunMs,
      scheduleWindowMs: Math.max(2 * config.sweepIntervalMs, 5000),
    });
    if (config.executor.concurrency > 0) {
      executor = new Executor(database.sql, clock, logger, {
        workerId: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
        concurrency: config.executor.concurrency,
        pollMs: config.executor.pollMs,
        heartbeatMs: config.executor.heartbeatMs,
        runTimeoutMs: config.executor.runTimeoutMs,
        workRoot: path.join(config.dataDir, 'work'),
        reporterUrl: `http://127.0.0.1:${port}`,
      });
      executor.start();
    }

    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // Stop accepting, let in-flight requests finish, then close the database.
        const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        httpServer.closeIdleConnections();
        await executor?.stop();
        await stopped;
        await sweeper.stop();
        await database.close();
      })());
    return { url: `http://127.0.0.1:${port}`, port, close };
  } catch (error) {
    await database.close();
    throw error;
  }
}
