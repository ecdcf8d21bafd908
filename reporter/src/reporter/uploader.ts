import type { Attempt, ListedTest } from './collect.ts';
import { type ReporterSettings, resolveRevision } from './settings.ts';
import { runName } from '../runs/name.ts';
import { ConnectBudget, ApiError, getJson, isTransient, postJson, type TransportOptions } from '../api/transport.ts';
import {
  type ReportRunAnswer,
  type ReportRunBody,
  type ResultBatchAnswer,
  type ResultBatchBody,
  type RunStateAnswer,
  type ShardBeginAnswer,
  type ShardBeginBody,
  type WireSnapshotLayout,
  type ShardEndAnswer,
  type ShardEndBody,
  type ShardEndStatus,
  OPTIONAL_ATTEMPT_FIELDS,
  OPTIONAL_FINAL_FIELDS,
  WIRE_LIMITS,
} from '../api/wire.ts';

/** Requests of one kind (result batches, attaches) under way at once: the server parses one while it writes the other. */
const IN_FLIGHT = 2;

export interface ShardStart {
  projectDir: string;
  tests: ListedTest[];
  complete: boolean;
  shard: number;
  totalShards: number;
  startedAt: Date;
  /** Where the suite keeps its screenshot baselines (sent with the first list of a shard). */
  snapshots?: WireSnapshotLayout;
}

export interface DeliveryReport {
  runId: number | null;
  /** The run's number in its project, as the server said it (what pages name it by); null when it did not. */
  runNumber: number | null;
  delivered: number;
  total: number;
  /** Final failures attached to their failure groups. */
  attached: number;
  /** What failed, once for each reason: the requests that met the same one are named together. */
  failures: string[];
  /** Requests not sent because an earlier one said the run takes nothing more (its reason is in `failures`, or `refusedAfterEnd`). */
  skipped: number;
  /** Requests the server refused because the run had ended (a cancel, fail fast): not a fault of the delivery, said apart. */
  refusedAfterEnd: string[];
  state: string | null;
  summaryUrl: string | null;
  /** Why nothing more was sent: the server could not be reached within the connect budget. */
  unreachable: string | null;
}

/** The run ended under the tests (a cancel, fail fast): its state and who cancelled it, as the server's typed fields say. */
export interface RunEnd {
  state: string | null;
  /** `max_failures` when fail fast stopped it; null when not said (a refusal's code names no canceller). */
  cancelledBy: string | null;
  /** Why it was cancelled, when the answer said (the run's state check does). */
  reason?: string | null;
}

/** Called once, on the first answer that says the run has ended. */
export type RunEndListener = (end: RunEnd) => void;

const ENDED_STATES = new Set(['passed', 'failed', 'error', 'cancelled']);

/** An attempt as a server takes it: without the optional fields of it and of its final outcome the server did not list. */
function withFinalFields(given: Attempt, accepted: ReadonlySet<string>): Attempt {
  let attempt = given;
  for (const field of OPTIONAL_ATTEMPT_FIELDS) {
    if (!accepted.has(field) && attempt[field] !== undefined) {
      attempt = { ...attempt };
      delete attempt[field];
    }
  }
  if (!attempt.final) return attempt;
  const unknown = OPTIONAL_FINAL_FIELDS.filter((field) => !accepted.has(field) && attempt.final?.[field] !== undefined);
  if (unknown.length === 0) return attempt;
  const final = { ...attempt.final };
  for (const field of unknown) delete final[field];
  return { ...attempt, final };
}

/** Requests that failed for one reason, by what they were: `send 4 result(s), send 3 result(s) and 2 more`. */
function namedTogether(what: string[]): string {
  const shown = what.slice(0, 2).join(', ');
  return what.length > 2 ? `${shown} and ${what.length - 2} more` : shown;
}

/**
 * Sends the shard's begin, its results in batches by size and time, and its end, one request at
 * a time in that order. Hooks only enqueue; `finish` awaits everything.
 */
export class Uploader {
  private readonly transport: TransportOptions;
  /** Requests in order: the start, then result batches (up to IN_FLIGHT at once), then the end. */
  private chain: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  private pending: Attempt[] = [];
  private timer: NodeJS.Timeout | null = null;
  private runId: number | null;
  private runNumber: number | null = null;
  private shard = 1;
  /** Set when the run cannot take more (unknown, cancelled, finished): later sends are skipped. */
  private stopReason: string | null = null;
  private total = 0;
  private delivered = 0;
  /** Each reason a request failed for, with what failed for it, in the order first met. */
  private readonly failures = new Map<string, string[]>();
  private skipped = 0;
  private readonly refusedAfterEnd: string[] = [];
  private endResponse: { state: string; summary_url: string } | null = null;
  /** Attaches to failure groups, each after its result's batch: started in order, IN_FLIGHT at once. */
  private attachChain: Promise<void> = Promise.resolve();
  private readonly attaching = new Set<Promise<void>>();
  private attached = 0;
  private started: Promise<void> = Promise.resolve();
  /** The optional fields of a final outcome the server said at begin that it stores (an older one refuses them). */
  private acceptedFinalFields: ReadonlySet<string> = new Set();

  /** Whether the listener heard of the run's end (it hears once). */
  private endHeard: RunEnd | null = null;
  /** The next check of the run's state while the tests run (`watchRunState`); null when none is due. */
  private watchTimer: NodeJS.Timeout | null = null;
  private watching = false;

  constructor(
    private readonly settings: ReporterSettings,
    private readonly onRunEnded: RunEndListener | null = null,
  ) {
    this.transport = {
      url: settings.url,
      apiKey: settings.apiKey,
      projectId: settings.projectId,
      maxAttempts: settings.maxAttempts,
      maxBackoffMs: settings.maxBackoffMs,
      budget: new ConnectBudget(settings.connectBudgetMs),
    };
    this.runId = settings.runId;
  }

  /** The run, once the shard's start has made or found it; null when it could not. */
  async runIdOnceStarted(): Promise<number | null> {
    await this.started;
    return this.stopReason ? null : this.runId;
  }

  /** The transport's settings, for the attachments' uploads. */
  get transportOptions(): TransportOptions {
    return this.transport;
  }

  start(start: ShardStart): void {
    this.shard = this.settings.shard ?? start.shard;
    this.enqueue(async () => {
      await resolveRevision(this.settings, start.projectDir);
      if (this.runId === null) {
        // Settings without a run id always name an environment.
        const environment = this.settings.environment;
        if (environment === null) throw new ApiError('no environment to report into', null);
        const body: ReportRunBody = {
          environment,
          run_key: this.settings.runKey,
          total_shards: this.settings.totalShards ?? start.totalShards,
          branch: this.settings.branch,
          commit: this.settings.commit,
          build_url: this.settings.buildUrl,
          ...(this.settings.pullRequest !== null ? { pull_request: this.settings.pullRequest } : {}),
          ...(this.settings.maxFailures !== null ? { max_failures: this.settings.maxFailures } : {}),
        };
        const response = await postJson<ReportRunAnswer>(this.transport, '/api/test-runs/report', body);
        this.runId = response.data.test_run.id;
        this.runNumber = response.data.test_run.number ?? null;
      }
      // Large suites list in several requests, each well under the server's body limit; begin is idempotent.
      for (let from = 0; from === 0 || from < start.tests.length; from += WIRE_LIMITS.listChunk) {
        const body: ShardBeginBody = {
          tests: start.tests.slice(from, from + WIRE_LIMITS.listChunk),
          commit: this.settings.commit,
          complete: start.complete,
          started_at: start.startedAt.toISOString(),
          ...(from === 0 && start.snapshots ? { snapshots: start.snapshots } : {}),
        };
        const path = `/api/test-runs/${this.runId}/shards/${this.shard}/begin`;
        // A server before 0.3.0 refuses the tests' owners, one before 0.4.0 the snapshot layout (unknown
        // fields): the list goes again without them.
        const answer = await postJson<ShardBeginAnswer>(this.transport, path, body).catch((error: unknown) => {
          if (!(error instanceof ApiError) || error.status !== 400 || !/owners|snapshots/.test(error.message)) throw error;
          const { snapshots: _snapshots, ...older } = body;
          return postJson<ShardBeginAnswer>(this.transport, path, { ...older, tests: body.tests.map(({ owners: _owners, ...test }) => test) });
        });
        this.acceptedFinalFields = new Set([...(answer.data.accepts_final_fields ?? []), ...(answer.data.accepts_attempt_fields ?? [])]);
        this.runNumber = answer.data.number ?? this.runNumber;
      }
    }, 'start the run');
    this.started = this.chain;
  }

  /**
   * Asks the run's state every `everyMs` while the tests run, from the run's start to `finish`: a
   * cancel (a person's, or fail fast's once another shard's failures reached the limit) reaches the
   * listener within about that, not at this shard's next upload, which a long test may hold back
   * for minutes. One attempt per check, outside the connect budget: a check that fails is tried
   * again at the next; a server without the route (a 404) or a key that may not read is asked
   * no more.
   */
  watchRunState(everyMs: number): void {
    if (everyMs <= 0) return;
    const options: TransportOptions = { ...this.transport, maxAttempts: 1, budget: undefined };
    const check = async () => {
      this.watchTimer = null;
      if (!this.watching || this.runId === null) return;
      try {
        const run = (await getJson<RunStateAnswer>(options, `/api/test-runs/${this.runId}/state`)).data.test_run;
        if (ENDED_STATES.has(run.state)) return this.runEnded({ state: run.state, cancelledBy: run.cancelled_by, reason: run.cancel_reason });
      } catch (error) {
        // A run's own key is refused once its run has ended, with the answer's code saying so.
        if (error instanceof ApiError && error.runEnded) return this.runEnded({ state: error.runEnded.state, cancelledBy: null });
        if (error instanceof ApiError && !isTransient(error)) return;
      }
      if (this.watching) this.watchTimer = setTimeout(() => void check(), everyMs).unref();
    };
    void this.started.then(() => {
      if (this.stopReason || this.runId === null || this.endHeard || this.watching) return;
      this.watching = true;
      this.watchTimer = setTimeout(() => void check(), everyMs).unref();
    });
  }

  add(attempt: Attempt): void {
    this.total++;
    this.pending.push(attempt);
    if (this.pending.length >= this.settings.batchSize) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.settings.flushIntervalMs);
  }

  async finish(status: ShardEndStatus, errors: string[]): Promise<DeliveryReport> {
    this.watching = false;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    this.watchTimer = null;
    this.flush();
    // The end waits for the results, not for the attaches: the run's completion does not read them.
    this.enqueue(async () => {
      const body: ShardEndBody = { status, errors };
      const response = await postJson<ShardEndAnswer>(this.transport, `/api/test-runs/${this.runId}/shards/${this.shard}/end`, body);
      this.endResponse = response.data;
      this.runNumber = response.data.number ?? this.runNumber;
    }, 'end the shard');
    await this.chain;
    await Promise.all(this.inFlight);
    await this.attachChain;
    await Promise.all(this.attaching);
    return {
      runId: this.runId,
      runNumber: this.runNumber,
      delivered: this.delivered,
      total: this.total,
      attached: this.attached,
      failures: [...this.failures].map(([reason, what]) => `could not ${namedTogether(what)}: ${reason}`),
      skipped: this.skipped,
      refusedAfterEnd: this.refusedAfterEnd,
      // A shard's end refused because the run had ended still says how it ended.
      state: this.endResponse?.state ?? this.endHeard?.state ?? null,
      summaryUrl: this.endResponse?.summary_url ?? null,
      unreachable: this.transport.budget?.exhausted?.message ?? null,
    };
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.enqueue(
      async () => {
        const results = batch.map((attempt) => withFinalFields(attempt, this.acceptedFinalFields));
        const answer = await postJson<ResultBatchAnswer>(this.transport, `/api/test-runs/${this.runId}/results`, {
          shard: this.shard,
          results,
        } satisfies ResultBatchBody);
        this.delivered += batch.length;
        // Fail fast: this batch's failures reached the run's limit, and the server cancelled it.
        const run = answer.data.test_run;
        if (run && ENDED_STATES.has(run.state)) this.runEnded({ state: run.state, cancelledBy: run.cancelled_by });
        this.attachFailures(batch);
      },
      `send ${batch.length} result(s)`,
      { concurrent: true },
    );
  }

  /**
   * Attaches the batch's final failures to their failure groups as soon as the server holds their
   * results (a group takes its title from the failure), during the run rather than at its end.
   */
  private attachFailures(batch: Attempt[]): void {
    for (const attempt of batch) {
      const groupId = attempt.final?.failure_group_id;
      if (!groupId) continue;
      const attach = async () => {
        await postJson(this.transport, `/api/failure-groups/${encodeURIComponent(groupId)}/members`, {
          test_run_id: this.runId,
          test_case_id: attempt.test_id,
        });
        this.attached++;
      };
      const what = `attach ${attempt.test_id} to failure group ${groupId}`;
      this.attachChain = this.attachChain.then(() => startBounded(this.attaching, () => this.guarded(attach, what, { mayStop: false })));
    }
  }

  /**
   * Runs one request; a failure is recorded, never thrown into Playwright. A failure that says the
   * run takes nothing more stops later sends, unless it came from an attach (its group may be at fault).
   */
  private async guarded(work: () => Promise<void>, what: string, { mayStop = true } = {}): Promise<void> {
    if (this.stopReason) {
      // The reason is said once, with the request that met it; what it stopped is counted.
      this.skipped++;
      return;
    }
    try {
      await work();
    } catch (error) {
      const message = (error as Error).message;
      const status = error instanceof ApiError ? error.status : null;
      // The run ended under the tests (a cancel, fail fast, another shard's failures): by the answer's code, never its words.
      // What it refuses then is said apart from the delivery's failures: the run's end is the reason.
      if (error instanceof ApiError && error.runEnded) {
        this.refusedAfterEnd.push(what);
        this.runEnded({ state: error.runEnded.state, cancelledBy: null });
        if (mayStop) this.stopReason = message;
        return;
      }
      this.failures.set(message, [...(this.failures.get(message) ?? []), what]);
      if (error instanceof ApiError && error.unreachable) this.stopReason = message;
      if (!mayStop) return;
      if (this.runId === null || status === 401 || status === 403 || status === 404 || status === 409) this.stopReason = message;
    }
  }

  private runEnded(end: RunEnd): void {
    if (this.endHeard) return;
    this.endHeard = end;
    this.watching = false;
    this.onRunEnded?.(end);
  }

  /**
   * Queues a request; a failure is recorded, never thrown into Playwright. Concurrent work (result
   * batches) starts once IN_FLIGHT allows; other work waits for everything before it.
   */
  private enqueue(work: () => Promise<void>, what: string, options: { concurrent?: boolean } = {}): void {
    const guarded = () => this.guarded(work, what);
    this.chain = this.chain.then(async () => {
      if (!options.concurrent) {
        await Promise.all(this.inFlight);
        await guarded();
        return;
      }
      await startBounded(this.inFlight, guarded);
    });
  }
}

/** Starts `work` once fewer than IN_FLIGHT of `running` are under way; it stays there until it settles. */
async function startBounded(running: Set<Promise<void>>, work: () => Promise<void>): Promise<void> {
  while (running.size >= IN_FLIGHT) await Promise.race(running);
  const request: Promise<void> = work().finally(() => running.delete(request));
  running.add(request);
}

/** The reporter's last line: what was delivered where, and each reason something was not, once. */
export function describeDelivery(report: DeliveryReport): string {
  if (report.unreachable) return `[proctor] ${report.delivered}/${report.total} results delivered; gave up: ${report.unreachable}`;
  const where = report.runId ? runName({ id: report.runId, number: report.runNumber }) : 'no run';
  const link = report.summaryUrl ? ` ${report.summaryUrl}` : '';
  const state = report.state ? ` (${report.state})` : '';
  const groups = report.attached > 0 ? `, ${report.attached} failure(s) attached to failure groups` : '';
  const skipped = report.skipped > 0 ? ` (${report.skipped} later request(s) not sent)` : '';
  const ended =
    report.refusedAfterEnd.length > 0
      ? `; not taken once the run had ended: ${namedTogether(report.refusedAfterEnd)}${report.failures.length === 0 ? skipped : ''}`
      : '';
  if (report.failures.length === 0) return `[proctor] ${report.delivered}/${report.total} results delivered to ${where}${state}${groups}${link}${ended}`;
  const reasons = report.failures.slice(0, 5).join('; ');
  return `[proctor] ${report.delivered}/${report.total} results delivered to ${where}${state}${groups}${link}${ended}; not delivered: ${reasons}${skipped}`;
}
