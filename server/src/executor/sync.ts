import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { DrainLoop } from './drain.ts';
import { beatSync, type ClaimedSync, claimSync, finishSync, recordRepositoryListing } from '../environments/index.ts';
import { deactivateUnlisted, upsertTestCases } from '../testcases/index.ts';
import { ListingError, listTests } from '@proctor/reporter/toolchain/playwright';
import { checkout, findEnvFiles, installDependencies, listBranches, RepositoryError, resolveRepository } from '@proctor/reporter/toolchain/repository';
import { assertReachable, handOver, prepareRunner, runnerEnvironment, SandboxError } from '@proctor/reporter/toolchain/sandbox';

export interface SyncWorkerOptions {
  workerId: string;
  pollMs: number;
  heartbeatMs: number;
  /** A running job whose server stopped beating this long is taken over. */
  lostMs: number;
  workRoot: string;
  runnerUser: string;
}

/**
 * Runs the sync jobs that requests record, one at a time in this process: checkout, install and
 * listing happen here, never inside a request.
 */
export class SyncWorker {
  private readonly loop: DrainLoop;

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: SyncWorkerOptions,
  ) {
    this.loop = new DrainLoop(
      () => this.runNext(),
      options.pollMs,
      (error) => logger.error({ err: error }, 'claiming sync jobs failed'),
    );
  }

  start(): void {
    this.loop.start();
  }

  /** Looks for pending jobs now. */
  wake(): void {
    this.loop.wake();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async runNext(): Promise<boolean> {
    const job = await claimSync(this.sql, this.options.workerId, this.clock(), this.options.lostMs);
    if (!job) return false;
    await this.runJob(job);
    return true;
  }

  private async runJob(job: ClaimedSync): Promise<void> {
    const beat = setInterval(() => {
      beatSync(this.sql, job.id, this.clock()).catch((error: unknown) => this.logger.warn({ err: error, sync_id: job.id }, 'sync heartbeat failed'));
    }, this.options.heartbeatMs);
    try {
      const synced = await syncEnvironment(this.sql, job, { root: this.options.workRoot, runnerUser: this.options.runnerUser }, this.clock);
      await finishSync(this.sql, job.id, { testCount: synced.testCount }, this.clock());
    } catch (error) {
      const refused = error instanceof RepositoryError || error instanceof SandboxError || error instanceof ListingError;
      if (!refused) this.logger.error({ err: error, sync_id: job.id }, 'sync failed');
      const message = error instanceof Error ? error.message : String(error);
      await finishSync(this.sql, job.id, { failure: refused ? 'repository' : 'internal', error: message }, this.clock());
    } finally {
      clearInterval(beat);
    }
  }
}

export interface SyncResult {
  runnerProjects: string[];
  envFiles: string[];
  testCount: number;
}

/**
 * Reads the test repository at its default branch: its runner projects and `.env*` files into the
 * environment, its tests into the project's inventory (tests it no longer has become inactive).
 */
async function syncEnvironment(sql: Sql, job: ClaimedSync, work: { root: string; runnerUser: string }, clock: Clock): Promise<SyncResult> {
  const runner = prepareRunner(work.root, work.runnerUser);
  assertReachable(runner);
  if (job.repo_url === null) throw new RepositoryError('the project has no test repository');
  const repository = await resolveRepository(job.repo_url);
  const branch = repository.kind === 'git' ? (await listBranches(repository)).defaultBranch : null;
  // Apart from any run's checkout; one open job per environment, so no two jobs share it.
  const { dir, headSha } = await checkout(repository, branch, path.join(work.root, 'sync', String(job.environment_id)), '0');
  try {
    if (repository.kind === 'git') await handOver(runner, dir);
    await installDependencies(dir, () => undefined, { ownFolder: repository.kind === 'folder', runner });
    const listing = await listTests(dir, runnerEnvironment(runner, process.env), runner);
    const envFiles = findEnvFiles(dir);
    const tests = listing.tests.map(({ file: _file, titles: _titles, ...listed }) => listed);
    await sql.begin(async (tx) => {
      const now = clock();
      await recordRepositoryListing(tx, job.environment_id, listing.projects, envFiles, now);
      await upsertTestCases(tx, job.project_id, tests, headSha, now, { keepOwners: true });
      await deactivateUnlisted(
        tx,
        job.project_id,
        listing.projects,
        tests.map((t) => t.id),
        now,
      );
    });
    return { runnerProjects: listing.projects, envFiles, testCount: listing.tests.length };
  } finally {
    if (repository.kind === 'git') fs.rmSync(dir, { recursive: true, force: true });
  }
}
