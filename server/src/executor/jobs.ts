import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import { type Config, workRootOf } from '../config.ts';
import type { Clock, JobControl } from '../context.ts';
import type { Sql } from '../db.ts';
import { rollUpNext } from '../analytics/index.ts';
import { createMailer } from '../mail/index.ts';
import { deliverNext, deliverVisualStatusNext } from '../notifications/index.ts';
import { deliverTrackerActionNext, followNextRun, pagesOf } from '../trackers/index.ts';
import { describeReport, runRetentionPass, serverPolicy } from '../retention/index.ts';
import { summaryUrl, triggerBaselineRerun } from '../runs/index.ts';
import { commitBaselinesNext, compareNext, proveNext } from '../visual/index.ts';
import { systemResolver } from '../outbound/addresses.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { DrainLoop } from './drain.ts';
import { Executor } from './executor.ts';
import { SyncWorker } from './sync.ts';
import { retentionLastPassSeconds, retentionLastPassTimestamp, retentionPasses, retentionRunsDeleted } from '../metrics.ts';

/**
 * What a process takes on: executing runs and sync jobs (a server that executes runs), writing
 * rollups and deleting what the retention policies expired (every server; the storage is where
 * the bytes to delete are).
 */
export interface JobsWanted {
  executeRuns: boolean;
  runSyncs: boolean;
  writeRollups: boolean;
  deleteExpired: BlobStorage | null;
  /** Send the notifications of ended runs, their links to the run pages signed with this secret. */
  sendNotifications: { signingSecret: string } | null;
  /** Find screenshot assertions among attachments, compare their images and commit the approved ones, read from this storage. */
  compareScreenshots?: BlobStorage | null;
}

/** How often a server looks for ended runs to roll up when nothing woke it. */
const ROLLUP_POLL_MS = 500;
/** How often a server looks for notifications due (a retry's time come, or a restart's leftovers). */
const NOTIFY_POLL_MS = 1000;
/** How often a server looks for new screenshot attachments to compare. */
const VISUAL_POLL_MS = 1000;

/**
 * The long work of one server process, and the handle the API nudges it through. Start it once
 * the server listens: the shards' reporter reaches the server at `reporterUrl`.
 */
export class Jobs implements JobControl {
  private executor: Executor | null = null;
  private syncs: SyncWorker | null = null;
  private rollups: DrainLoop | null = null;
  private retention: DrainLoop | null = null;
  private notifications: DrainLoop | null = null;
  private visual: DrainLoop | null = null;
  private readonly stopping = new AbortController();

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly config: Config,
  ) {}

  start(reporterUrl: string, wanted: JobsWanted): void {
    const workerId = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const { executor: tuning } = this.config;
    const workRoot = workRootOf(this.config);
    if (wanted.executeRuns) {
      this.executor = new Executor(this.sql, this.clock, this.logger, {
        workerId,
        concurrency: tuning.concurrency,
        pollMs: tuning.pollMs,
        heartbeatMs: tuning.heartbeatMs,
        runTimeoutMs: tuning.runTimeoutMs,
        workRoot,
        reporterUrl,
        runnerUser: this.config.runnerUser,
      });
      this.executor.start();
    }
    if (wanted.runSyncs) {
      this.syncs = new SyncWorker(this.sql, this.clock, this.logger, {
        workerId,
        pollMs: tuning.pollMs,
        heartbeatMs: tuning.heartbeatMs,
        lostMs: tuning.lostRunMs,
        workRoot,
        runnerUser: this.config.runnerUser,
      });
      this.syncs.start();
    }
    if (wanted.writeRollups) {
      this.rollups = new DrainLoop(
        () => rollUpNext(this.sql, this.clock),
        ROLLUP_POLL_MS,
        (error) => this.logger.error({ err: error }, 'writing rollups failed'),
      );
      this.rollups.start();
    }
    if (wanted.deleteExpired) this.startRetention(wanted.deleteExpired);
    if (wanted.sendNotifications) this.startNotifications(wanted.sendNotifications.signingSecret);
    if (wanted.compareScreenshots) {
      const deps = { sql: this.sql, storage: wanted.compareScreenshots, clock: this.clock, settings: this.config.notify, triggerRerun: triggerBaselineRerun };
      this.visual = new DrainLoop(
        async () => (await compareNext(deps)) || (await commitBaselinesNext(deps)) || (await proveNext(deps)),
        VISUAL_POLL_MS,
        (error) => this.logger.error({ err: error }, 'comparing screenshots or committing baselines failed'),
      );
      this.visual.start();
    }
  }

  private startNotifications(signingSecret: string): void {
    const deps = {
      sql: this.sql,
      clock: this.clock,
      settings: this.config.notify,
      receivers: { allow: this.config.notify.allow, resolve: systemResolver },
      mailer: createMailer(this.config.mail, this.logger),
      runUrl: (runId: number) => summaryUrl(this.config.publicUrl, signingSecret, runId, this.clock()),
      pageUrl: (path: string) => `${this.config.publicUrl}${path}`,
    };
    this.notifications = new DrainLoop(
      async () =>
        (await deliverNext(deps)) ||
        (await deliverVisualStatusNext(deps)) ||
        (await followNextRun(this.sql, (projectId) => pagesOf(this.config.publicUrl, projectId), this.clock)) ||
        (await deliverTrackerActionNext(deps)),
      NOTIFY_POLL_MS,
      (error) => this.logger.error({ err: error }, 'sending notifications failed'),
    );
    this.notifications.start();
  }

  /** A pass at start and every interval after; one that deleted something says what in the log. */
  private startRetention(storage: BlobStorage): void {
    const deps = { sql: this.sql, storage, clock: this.clock, defaults: serverPolicy(this.config) };
    const pass = async () => {
      const started = performance.now();
      let reports;
      try {
        reports = await runRetentionPass(deps, { signal: this.stopping.signal });
      } catch (error) {
        retentionPasses.inc({ outcome: 'error' });
        throw error;
      }
      retentionPasses.inc({ outcome: 'ok' });
      retentionLastPassSeconds.set((performance.now() - started) / 1000);
      retentionLastPassTimestamp.set(Date.now() / 1000);
      for (const report of reports) {
        retentionRunsDeleted.inc({ kind: 'results' }, report.runs);
        retentionRunsDeleted.inc({ kind: 'artifacts' }, report.artifact_runs);
        if (report.runs + report.artifact_runs > 0) this.logger.info({ retention: report }, describeReport(report, false));
      }
      return false;
    };
    this.retention = new DrainLoop(pass, this.config.retention.intervalMs, (error) => this.logger.error({ err: error }, 'the retention pass failed'));
    this.retention.start();
  }

  async stopRun(runId: number, requestId?: string): Promise<void> {
    if (this.executor?.runs(runId)) this.logger.info({ test_run_id: runId, request_id: requestId ?? null }, 'stopping a run on request');
    await this.executor?.stopRun(runId);
  }

  syncRequested(): void {
    this.syncs?.wake();
  }

  runEnded(): void {
    this.rollups?.wake();
    this.notifications?.wake();
  }

  /** Stops claiming; runs under way end `error`, the sync and the rollup under way finish, the retention pass at its next chunk. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all([
      this.executor?.stop(),
      this.syncs?.stop(),
      this.rollups?.stop(),
      this.retention?.stop(),
      this.notifications?.stop(),
      this.visual?.stop(),
    ]);
  }
}
