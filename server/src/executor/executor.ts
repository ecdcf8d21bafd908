import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { createRunKey } from '../auth/index.ts';
import { testsSeenIn } from '../analytics/index.ts';
import type { Clock } from '../context.ts';
import type { Sql } from '../db.ts';
import { shardsEnded } from './store.ts';
import { narrowToAffected } from './affected.ts';
import { affectedAsked } from '../selection/index.ts';
import { RunEndedError } from '../errors.ts';
import { recordBurnIn } from '../flaky/index.ts';
import { requireRepository } from '../projects/index.ts';
import { type AgentProcess, spawnAgent } from './agent-process.ts';
import { type ClaimedRun, claimAgentRun, claimRun, endShard, failRun, heartbeat, recordBranch, recordHeadSha, resolveBranch } from '../runs/index.ts';
import { ChromiumCheck } from './browser.ts';
import {
  isSelected,
  killMarked,
  killShard,
  type Listing,
  listTests,
  pickTests,
  playwrightVersion,
  provideVideoEncoder,
  runRepeats,
  type Selection,
  selectTests,
  shardArgs,
  type ShardProcess,
  spawnShard,
} from '@proctor/reporter/toolchain/playwright';
import { listBranches, resolveRepository } from '@proctor/reporter/toolchain/repository';
import { checkOutAndInstall, suiteEnvironment } from '@proctor/reporter/toolchain/workspace';
import { assertReachable, handOver, prepareRunner, type Runner, runnerEnvironment } from '@proctor/reporter/toolchain/sandbox';
import { executorRunsClaimed, executorSlots, executorSlotsBusy } from '../metrics.ts';

export interface ExecutorOptions {
  workerId: string;
  concurrency: number;
  pollMs: number;
  heartbeatMs: number;
  runTimeoutMs: number;
  workRoot: string;
  /** Where the shards' reporter reaches this server. */
  reporterUrl: string;
  /** The unprivileged user that runs suites when the server runs as root. */
  runnerUser: string;
}

type StopReason = 'cancelled' | 'timeout' | 'shutdown';

interface ActiveRun {
  /** In every shard process's environment, to find what a group kill leaves behind. */
  marker: string;
  stopReason: StopReason | null;
  shards: ShardProcess[];
  /** A run of agents this server serves as one of them: stopped through it. */
  agent: AgentProcess | null;
  done: Promise<void>;
}

/** A failure of the run itself (not of its tests): the run ends `error` with this reason. */
class RunFailure extends Error {}

/** Claims pending runs and executes them with real Playwright, `concurrency` at a time. */
export class Executor {
  private readonly active = new Map<number, ActiveRun>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private stopping = false;
  private readonly runner: Runner;
  private readonly chromium: ChromiumCheck;

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ExecutorOptions,
  ) {
    this.runner = prepareRunner(options.workRoot, options.runnerUser);
    this.chromium = new ChromiumCheck(() => runnerEnvironment(this.runner, process.env));
  }

  start(): void {
    try {
      assertReachable(this.runner);
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'runs will fail until this is fixed');
    }
    void this.chromium.missing().then((reason) => reason && this.logger.warn(reason));
    executorSlots.set(this.options.concurrency);
    this.timer = setInterval(() => void this.tick(), this.options.pollMs);
    this.timer.unref();
    void this.tick();
  }

  /** Claims while there is room. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopping) return;
    this.ticking = true;
    try {
      while (this.active.size < this.options.concurrency && !this.stopping) {
        const run = await claimRun(this.sql, this.options.workerId, this.clock());
        if (run) {
          this.launch(run);
          continue;
        }
        const agentRun = await this.sql.begin((tx) => claimAgentRun(tx, this.clock()));
        if (!agentRun) break;
        this.serveAsAgent(agentRun);
      }
    } catch (error) {
      this.logger.error({ err: error }, 'claiming runs failed');
    } finally {
      this.ticking = false;
    }
  }

  /** Whether this executor runs the run now. */
  runs(runId: number): boolean {
    return this.active.has(runId);
  }

  async stopRun(runId: number): Promise<void> {
    await this.abort(runId, 'cancelled');
  }

  /** Stops claiming; runs under way are stopped and end `error`. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.active.keys()].map((id) => this.abort(id, 'shutdown')));
    await Promise.all([...this.active.values()].map((run) => run.done));
  }

  private async abort(runId: number, reason: StopReason): Promise<void> {
    const run = this.active.get(runId);
    if (!run) return;
    run.stopReason ??= reason;
    // A cancel reaches the local agent through its heartbeat, as it reaches every agent.
    if (reason === 'shutdown') run.agent?.stop();
    await Promise.all(run.shards.map((shard) => killShard(shard)));
    killMarked(run.marker);
  }

  private launch(claimed: ClaimedRun): void {
    const run: ActiveRun = { marker: `${this.options.workerId}:${claimed.id}`, stopReason: null, shards: [], agent: null, done: Promise.resolve() };
    this.occupy(claimed.id, run, 'shards');
    run.done = this.execute(claimed, run).finally(() => this.vacate(claimed.id));
  }

  /**
   * Serves a run of agents as one more agent, over the same API as a remote one (with a key of the
   * run's own): it pulls units beside whichever agents join, until none is left.
   */
  private serveAsAgent(claimed: { id: number; project_id: number }): void {
    const run: ActiveRun = { marker: `${this.options.workerId}:${claimed.id}`, stopReason: null, shards: [], agent: null, done: Promise.resolve() };
    this.occupy(claimed.id, run, 'agents');
    const log = this.logger.child({ test_run_id: claimed.id, agent: 'server' });
    run.done = (async () => {
      // The one run's key that may join its run as an agent; never handed to the tests (they get the join's reporter key).
      const key = await this.sql.begin((tx) => createRunKey(tx, claimed.project_id, claimed.id, true));
      const settings = {
        url: this.options.reporterUrl,
        key,
        runId: claimed.id,
        name: `server ${this.options.workerId}`,
        workdir: this.options.workRoot,
        runnerUser: this.options.runnerUser,
      };
      run.agent = spawnAgent(settings, log);
      const exit = await run.agent.exited;
      if (exit.code === 0 || run.stopReason === 'shutdown') {
        log.info({ reason: exit.reason }, 'the server stopped serving a run of agents');
        return;
      }
      // The server could not serve it (a checkout, an install, a listing): the run says why at once.
      log.warn({ reason: exit.reason }, 'the server could not serve a run of agents');
      await failRun(this.sql, claimed.id, exit.reason, this.clock());
    })()
      .catch((error: unknown) => log.error({ err: error }, 'serving a run of agents failed'))
      .finally(() => this.vacate(claimed.id));
  }

  private occupy(runId: number, run: ActiveRun, distribution: 'shards' | 'agents'): void {
    this.active.set(runId, run);
    executorRunsClaimed.inc({ distribution });
    executorSlotsBusy.set(this.active.size);
  }

  private vacate(runId: number): void {
    this.active.delete(runId);
    executorSlotsBusy.set(this.active.size);
  }

  private async execute(claimed: ClaimedRun, run: ActiveRun): Promise<void> {
    const log = this.logger.child({ test_run_id: claimed.id });
    const beat = setInterval(() => {
      heartbeat(this.sql, claimed.id, this.clock())
        .then((state) => (state === 'cancelled' ? this.abort(claimed.id, 'cancelled') : undefined))
        .catch((error: unknown) => log.warn({ err: error }, 'heartbeat failed'));
    }, this.options.heartbeatMs);
    const deadline = setTimeout(() => void this.abort(claimed.id, 'timeout'), this.options.runTimeoutMs);
    let checkoutDir: string | null = null;
    const scratch = path.join(this.runner.home, 'tmp', `run-${claimed.id}`);
    try {
      const noBrowser = await this.chromium.missing();
      if (noBrowser) throw new RunFailure(noBrowser);
      assertReachable(this.runner);
      fs.rmSync(scratch, { recursive: true, force: true });
      fs.mkdirSync(scratch, { mode: 0o700 });
      await handOver(this.runner, scratch);
      checkoutDir = await this.runShards(claimed, run, log, scratch);
      await this.finish(claimed, run);
    } catch (error) {
      const reason = error instanceof RunFailure || error instanceof Error ? error.message : String(error);
      log.warn({ reason }, 'run failed to execute');
      if (run.stopReason !== 'cancelled') await failRun(this.sql, claimed.id, reason, this.clock());
    } finally {
      clearInterval(beat);
      clearTimeout(deadline);
      if (checkoutDir?.startsWith(path.join(this.options.workRoot, 'runs'))) fs.rmSync(checkoutDir, { recursive: true, force: true });
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Repeats the tests this environment has never run, before the shards: the flakiness rollup
   * reads what the repeats found when the run ends.
   */
  private async burnIn(
    claimed: ClaimedRun,
    listing: Listing,
    selection: Selection,
    where: { dir: string; env: NodeJS.ProcessEnv; scratch: string },
    log: Logger,
  ): Promise<void> {
    const seen = await testsSeenIn(this.sql, claimed.project_id, claimed.environment_id);
    const fresh = listing.tests.filter((test) => !seen.has(test.id) && isSelected(test, selection, claimed.test_case_ids));
    if (fresh.length === 0) return;
    log.info({ tests: fresh.length, repeats: claimed.burn_in_repeats }, 'burning in new tests');
    const repeated = await runRepeats(where.dir, where.env, this.runner, fresh, claimed.burn_in_repeats, where.scratch);
    await recordBurnIn(this.sql, claimed.id, repeated);
  }

  /**
   * Checks the repository out, prepares it and runs the shards to their end, as the runner, with
   * `scratch` (the runner's) for Playwright's output. Returns the checkout.
   */
  private async runShards(claimed: ClaimedRun, run: ActiveRun, log: Logger, scratch: string): Promise<string> {
    const repository = await resolveRepository(requireRepository(claimed.repo_url));
    let branch = claimed.test_run_branch;
    if (!branch && repository.kind === 'git') {
      branch = resolveBranch(await listBranches(repository), null, claimed.build_branch);
      await recordBranch(this.sql, claimed.id, branch);
    }
    const workspace = await checkOutAndInstall(
      { repository, branch, commit: null, workRoot: this.options.workRoot, folder: String(claimed.id), runner: this.runner },
      (line) => log.info(line),
    );
    const { dir, headSha } = workspace;
    await recordHeadSha(this.sql, claimed.id, headSha);
    if (run.stopReason) return dir;

    const apiKey = await createRunKey(this.sql, claimed.project_id, claimed.id);
    const env = suiteEnvironment(this.runner, {
      checkoutDir: dir,
      envFiles: claimed.env_files,
      overrides: claimed.environment_variables_overrides,
      buildUrl: claimed.build?.url ?? null,
      reporter: { url: this.options.reporterUrl, apiKey, runId: claimed.id, commit: headSha, branch },
    });

    const affected = await affectedAsked(this.sql, claimed.id);
    const needsListing = affected.affected || claimed.test_case_ids.length > 0 || claimed.runner_projects_ignore.length > 0 || claimed.burn_in_repeats > 0;
    // The environment's Playwright arguments (checked when they were set) choose what is listed, as what runs.
    const listing = needsListing ? await listTests(dir, env, this.runner, claimed.playwright_args) : null;
    let selection = selectTests(listing, {
      match: claimed.runner_projects_match,
      ignore: claimed.runner_projects_ignore,
      tags: claimed.tags,
      testIds: claimed.test_case_ids,
    });
    let extraArgs: string[] = [];
    if (affected.affected && listing) {
      const where = { dir, env, runner: this.runner, version: playwrightVersion(dir, this.runner), branch, listing, selection };
      ({ selection, extraArgs } = await narrowToAffected(this.sql, claimed, affected.full_run_every, where, log));
    }
    if (selection.tests?.length === 0 && extraArgs.length === 0) throw new RunFailure('none of the requested test ids is in the repository');
    if (selection.projects?.length === 0) throw new RunFailure("the environment's runner project filters leave no project to run");
    // Named as the suite's own Playwright understands: --test-list from 1.56, locations before.
    const pick = selection.tests ? pickTests(selection.tests, playwrightVersion(dir, this.runner), path.join(scratch, 'tests.txt')) : null;
    if (run.stopReason) return dir;
    if (listing && claimed.burn_in_repeats > 0) await this.burnIn(claimed, listing, selection, { dir, env, scratch }, log);
    if (run.stopReason) return dir;
    const video = provideVideoEncoder(dir, env, this.runner);
    if (video.kind === 'none') log.warn(video.reason);
    for (let shard = 1; shard <= claimed.total_shards; shard++) {
      const args = shardArgs(this.runner, selection, shard, claimed.total_shards, pick, path.join(scratch, `shard-${shard}`), [
        ...claimed.playwright_args,
        ...extraArgs,
      ]);
      run.shards.push(spawnShard(dir, args, { ...env, PROCTOR_SHARD: String(shard), PROCTOR_EXECUTION: run.marker }, this.runner));
    }
    log.info({ shards: claimed.total_shards, branch, head: headSha }, 'shards started');
    await Promise.all(run.shards.map((shard) => shard.exited));
    killMarked(run.marker);
    return dir;
  }

  /** After the shards: a timeout or a stop ends the run `error`; a shard that never reported its end crashed. */
  private async finish(claimed: ClaimedRun, run: ActiveRun): Promise<void> {
    const now = this.clock();
    if (run.stopReason === 'cancelled') return;
    if (run.stopReason === 'timeout') {
      const minutes = Math.round(this.options.runTimeoutMs / 60_000);
      throw new RunFailure(`the run exceeded its time limit of ${minutes} min and was stopped`);
    }
    if (run.stopReason === 'shutdown') throw new RunFailure('the server stopped while the run was executing');
    const endedShards = await shardsEnded(this.sql, claimed.id);
    for (const [index, shard] of run.shards.entries()) {
      if (endedShards.has(index + 1)) continue;
      const code = await shard.exited;
      const tail = shard.output().trim().slice(-4000);
      try {
        await endShard(this.sql, claimed.project_id, claimed.id, index + 1, { status: 'crashed', errors: [`exit code ${code}\n${tail}`] }, now);
      } catch (error) {
        if (!(error instanceof RunEndedError)) throw error;
      }
    }
  }
}
