import fs from 'node:fs';
import path from 'node:path';
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';
import { plainText } from '../text/ansi.ts';
import { type ArtifactReport, ArtifactUploader, describeSize } from './artifacts.ts';
import { AttachmentCollector } from './attachments.ts';
import { listIsComplete, listTest, toAttempt } from './collect.ts';
import { ownersResolver } from './owners.ts';
import { type ActiveSnoozes, describeVerdict, type FailedTest, judge, readActiveSnoozes, worthSaying } from './forgiveness.ts';
import { type ProctorReporterOptions, resolveSettings } from './settings.ts';
import { snapshotLayout } from './snapshots.ts';
import { readUnits, UnitBatch } from './unit-batch.ts';
import { describeDelivery, type RunEnd, Uploader } from './uploader.ts';

export type { ProctorReporterOptions } from './settings.ts';
export { failureSignature, failureMode } from '../text/signature.ts';

/**
 * Uploads a Playwright run's results to Proctor. Use in playwright.config.ts as
 * `['@proctor/reporter', { url, apiKey, projectId, environment }]` (or PROCTOR_* variables).
 * An upload failure is reported in one line and never changes the test outcome.
 */
export default class ProctorReporter implements Reporter {
  private readonly options: ProctorReporterOptions;
  private uploader: Uploader | UnitBatch | null = null;
  private collector: AttachmentCollector | null = null;
  private artifacts: ArtifactUploader | null = null;
  private artifactWaitMs = 0;
  private rootDir = process.cwd();
  private disabledReason: string | null = null;
  private readonly errors: string[] = [];
  /** The environment's active snoozes, read at start; null when no failure is to be forgiven. */
  private snoozes: Promise<ActiveSnoozes> | null = null;
  private readonly failed = new Map<string, FailedTest>();
  /** When the first test began and the last ended (epoch ms): an agent's measure of its Playwright's start. */
  private readonly times = { firstBegin: null as number | null, lastEnd: null as number | null };

  constructor(options: ProctorReporterOptions = {}) {
    this.options = options;
  }

  printsToStdio(): boolean {
    return false;
  }

  onBegin(config: FullConfig, suite: Suite): void {
    this.rootDir = config.configFile ? path.dirname(config.configFile) : config.rootDir;
    const resolved = resolveSettings(this.options, process.env);
    if (!resolved.ok) {
      this.disabledReason = resolved.reason;
      return;
    }
    const units = readUnits(process.env);
    const stop = (end: RunEnd) => this.stopTests(end);
    const uploader = units ? new UnitBatch(resolved.settings, units, stop) : new Uploader(resolved.settings, stop);
    this.uploader = uploader;
    this.collector = new AttachmentCollector(resolved.settings.artifacts);
    this.artifacts = new ArtifactUploader(uploader.transportOptions, resolved.settings.artifactLimitBytes, () => uploader.runIdOnceStarted());
    this.artifactWaitMs = resolved.settings.artifactWaitMs;
    const { environment, forgiveSnoozed } = resolved.settings;
    this.uploader.start({
      projectDir: this.rootDir,
      tests: (() => {
        const ownersOf = ownersResolver(this.rootDir);
        return suite.allTests().map((test) => listTest(test, this.rootDir, ownersOf));
      })(),
      complete: listIsComplete(process.argv),
      shard: config.shard?.current ?? 1,
      totalShards: config.shard?.total ?? 1,
      startedAt: new Date(),
      snapshots: snapshotLayout(config, this.rootDir),
    });
    // A shard CI runs itself hears a cancel within a second; an agent's units hear it from their agent.
    if (uploader instanceof Uploader) uploader.watchRunState(resolved.settings.cancelCheckMs);
    // Read once the run has started: joining it makes an environment used for the first time,
    // which has no snoozes yet but would answer 404 until then.
    if (forgiveSnoozed && environment) this.snoozes = uploader.runIdOnceStarted().then(() => readActiveSnoozes(uploader.transportOptions, environment));
  }

  onTestBegin(): void {
    this.times.firstBegin ??= Date.now();
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    this.times.lastEnd = Date.now();
    if (!this.uploader) return;
    const attempt = toAttempt(test, result, this.rootDir);
    this.uploader.add(attempt);
    if (attempt.final?.outcome === 'unexpected') this.failed.set(test.id, { id: test.id, title: test.titlePath().filter(Boolean).join(' › ') });
    else if (attempt.final) this.failed.delete(test.id);
    const attachments = this.collector?.collect(test, result, attempt.final !== null) ?? [];
    if (attachments.length > 0) this.artifacts?.add(attachments);
  }

  onError(error: TestError): void {
    this.errors.push(plainText(error.message ?? error.value ?? 'unknown error').slice(0, 20_000));
  }

  async onEnd(result: FullResult): Promise<{ status?: FullResult['status'] } | undefined> {
    // An agent's Playwright: when its tests began and ended, against its own start and exit.
    if (process.env.PROCTOR_TIMINGS) {
      try {
        fs.writeFileSync(process.env.PROCTOR_TIMINGS, JSON.stringify(this.times));
      } catch {
        // Only a measure: without it the agent keeps its last one.
      }
    }
    if (!this.uploader) {
      process.stdout.write(`[proctor] results not uploaded: ${this.disabledReason ?? 'the reporter did not start'}\n`);
      return;
    }
    // From here on, time spent on a server that cannot be reached is added to the job.
    this.uploader.transportOptions.budget?.testsEnded();
    // The shard's end waits for the attachments, within a bound: the run page shows them once it ends.
    const artifacts = await this.artifacts?.settle(this.artifactWaitMs);
    const report = await this.uploader.finish(result.status, this.errors);
    // An unreachable server is said last, and once: the attachments met it too.
    const artifactLine = artifacts && !report.unreachable ? describeArtifacts(artifacts) : null;
    process.stdout.write(`${[describeDelivery(report), artifactLine].filter(Boolean).join('\n')}\n`);
    // Nothing is forgiven against a server that could not be reached, and the line above says why.
    return report.unreachable ? undefined : this.forgive(result);
  }

  /**
   * The run ended under the tests (cancelled by a person, or by fail fast once its failures reached
   * `max_failures`): the tests still to run would only be refused. A reporter cannot abort
   * Playwright, so it does what Ctrl-C does: a SIGINT to its own Playwright, which stops its
   * workers, ends the run `interrupted` and exits non-zero (130); `proctor-ci agent` and the
   * server's executor stop their Playwright on their own as well. Said once, clearly.
   */
  private stopTests(end: RunEnd): void {
    const by = end.cancelledBy === 'max_failures' ? ' by fail fast: its failures reached max_failures' : '';
    const reason = end.reason ? `: ${end.reason}` : '';
    process.stdout.write(`[proctor] the run has ended (${end.state ?? 'ended'})${by}${reason}; stopping the tests: Playwright ends interrupted\n`);
    process.kill(process.pid, 'SIGINT');
  }

  /** Playwright's result passes when every failed test is snoozed in Proctor; otherwise it stands. */
  private async forgive(result: FullResult): Promise<{ status?: FullResult['status'] } | undefined> {
    if (!this.snoozes) return undefined;
    const verdict = judge(result.status, [...this.failed.values()], this.errors.length, await this.snoozes, new Date());
    if (!verdict) return undefined;
    if (worthSaying(verdict)) process.stdout.write(`${describeVerdict(verdict)}\n`);
    return verdict.kind === 'forgiven' ? { status: 'passed' } : undefined;
  }
}

function describeArtifacts(report: ArtifactReport): string | null {
  const sent = report.uploaded + report.alreadyStored;
  if (sent === 0 && report.refused.length === 0 && report.failures.length === 0) return null;
  const parts = [`[proctor] ${report.uploaded} attachment(s) uploaded (${describeSize(report.uploadedBytes)}), ${report.alreadyStored} already stored`];
  if (report.refused.length > 0)
    parts.push(`refused: ${report.refused.slice(0, 5).join('; ')}${report.refused.length > 5 ? `; and ${report.refused.length - 5} more` : ''}`);
  if (report.failures.length > 0) parts.push(`not delivered: ${[...new Set(report.failures)].slice(0, 5).join('; ')}`);
  return parts.join('; ');
}
