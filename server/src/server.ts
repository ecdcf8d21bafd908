import cluster from 'node:cluster';
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from 'pino';
import { type Config, smtpServerOf } from './config.ts';
import type { Clock } from './context.ts';
import { Jobs } from './executor/jobs.ts';
import { postgresIsPatched } from './copyfix.ts';
import { type Database, isPglite, openDatabase } from './db.ts';
import { seedDemo } from './demo.ts';
import { migrate } from './migrate.ts';
import { startSweeper } from './executor/sweeper.ts';
import { registerDatabaseGauges } from './executor/gauges.ts';
import { checkPortFree, serveApp, serveMetrics, type Serving } from './serving.ts';
import { collectProcessMetrics } from './metrics.ts';
import { openStorage } from './storage/open.ts';
import { recordPublicUrl, resolveSigningSecret } from './system/store.ts';
import { signInHint } from './users/index.ts';
import { forkHttpWorkers, startHttpWorker } from './workers.ts';

/**
 * Where people reach the server: PUBLIC_URL, else the address it listens on (localhost when it
 * listens on every interface). The CLI reads it back from the database for the links it prints.
 */
function publicUrlOf(config: Config, port: number): string {
  if (config.publicUrlGiven) return config.publicUrl;
  const wildcard = ['0.0.0.0', '::', '0:0:0:0:0:0:0:0'].includes(config.host);
  const host = wildcard ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Where the node's metrics are served; null when they are not (PROCTOR_METRICS_PORT). */
  metricsPort: number | null;
  close(): Promise<void>;
}

const UNPATCHED_POSTGRES =
  "postgres.js is not patched (the install skipped @proctor/server's postinstall): results are written without COPY, more slowly, and a transaction may fail under load; run `node node_modules/@proctor/server/scripts/patch-postgres.mjs` and restart";

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
    return { url: `http://127.0.0.1:${worker.port}`, port: worker.port, metricsPort: null, close: worker.close };
  }
  await checkPortFree(config.port, config.host);
  if (config.metrics) await checkPortFree(config.metrics.port, config.metrics.host);
  // Traversable by the user that runs suites, which reaches its own folders below; listable by no one else.
  fs.mkdirSync(config.dataDir, { recursive: true });
  fs.chmodSync(config.dataDir, 0o711);
  const database = await openDatabase(config);
  let serving: Serving | null = null;
  let metrics: Serving | null = null;
  try {
    if (!postgresIsPatched()) logger.warn(UNPATCHED_POSTGRES);
    const applied = await migrate(database.sql);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    const signingSecret = await resolveSigningSecret(database.sql, config.signingSecret);
    // The jobs start once the server listens (the reporter needs its port); the API nudges them through this handle.
    const jobs = new Jobs(database.sql, clock, logger, config);
    const httpWorkers = await httpWorkerCount(config, database, logger);
    // Before the API: once the API answers, so do the metrics.
    if (config.metrics) {
      collectProcessMetrics();
      registerDatabaseGauges(database.sql, logger, config.agentLeaseMs);
      metrics = await serveMetrics(config.metrics);
    }
    serving =
      httpWorkers > 1
        ? await forkHttpWorkers(httpWorkers, config.dbPoolMax, logger, jobs)
        : await serveApp(config, { sql: database.sql, logger, clock, signingSecret, jobs });
    const { port } = serving;
    const publicUrl = publicUrlOf(config, port);
    await recordPublicUrl(database.sql, publicUrl);
    logger.info(
      {
        port,
        metrics_port: metrics?.port ?? null,
        public_url: publicUrl,
        embedded: database.embedded,
        http_workers: httpWorkers,
        storage: config.s3 ? `s3://${config.s3.bucket}/${config.s3.prefix}` : 'files',
        // The SMTP server without its user and password; none: no mail is sent.
        mail: config.mail ? smtpServerOf(config.mail) : 'none',
      },
      'listening',
    );
    if (config.demo) await seedDemo(database.sql, config, publicUrl);
    if (!config.oidc) process.stdout.write(`${await signInHint(database.sql)}\n`);
    const sweeper = startSweeper(database.sql, clock, logger, {
      // Often enough that a run of agents all gone before planning ends about a lease time after them.
      intervalMs: Math.min(config.sweepIntervalMs, Math.max(1000, config.agentLeaseMs / 4)),
      agentLeaseMs: config.agentLeaseMs,
      shardTimeoutMs: config.shardTimeoutMs,
      lostRunMs: config.executor.lostRunMs,
      runTakeovers: config.executor.runTakeovers,
      scheduleWindowMs: Math.max(2 * config.sweepIntervalMs, 5000),
    });
    const executes = config.executor.concurrency > 0;
    const storage = await openStorage(config);
    jobs.start(`http://127.0.0.1:${port}`, {
      executeRuns: executes,
      runSyncs: executes,
      writeRollups: true,
      deleteExpired: storage,
      sendNotifications: { signingSecret },
      compareScreenshots: storage,
    });

    const served = serving;
    const metricsServed = metrics;
    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // Stop accepting, let in-flight requests finish, then close the database.
        const stopped = served.close();
        await jobs.stop();
        await stopped;
        await sweeper.stop();
        await metricsServed?.close();
        await database.close();
      })());
    return { url: `http://127.0.0.1:${port}`, port, metricsPort: metricsServed?.port ?? null, close };
  } catch (error) {
    await metrics?.close();
    await serving?.close();
    await database.close();
    throw error;
  }
}
