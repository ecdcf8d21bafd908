// An agent runs several units of its run in one Playwright (its start paid once): the reporter
// then reports each unit as the run's shard of its number, as if each had a Playwright of its own.
// Each test goes to its unit by its id; a test no unit names (a setup project's, or one a location
// selected beside the unit's) to the unit of its file, else to the batch's first unit. Each unit's
// shard ends with its own status, from its own tests' final outcomes (unitStatus).
import fs from 'node:fs';
import type { Attempt, ListedTest } from './collect.ts';
import type { ReporterSettings } from './settings.ts';
import type { TransportOptions } from '../api/transport.ts';
import { type DeliveryReport, type RunEndListener, type ShardStart, Uploader } from './uploader.ts';
import type { ShardEndStatus } from '../api/wire.ts';

/** What the agent writes for the reporter (`PROCTOR_UNITS`, a file's path): the batch's units. */
export interface UnitsFile {
  units: { unit: number; runner_project: string; file: string; test_ids: string[] }[];
}

/** The batch's units from the file the agent wrote; null when there is none (one unit, or no agent). */
export function readUnits(env: NodeJS.ProcessEnv): UnitsFile['units'] | null {
  const file = env.PROCTOR_UNITS;
  if (!file) return null;
  const units = (JSON.parse(fs.readFileSync(file, 'utf8')) as UnitsFile).units;
  return units.length > 0 ? units : null;
}

/** What a unit's own tests came to: whether one failed, and whether each of them reached its final outcome. */
export interface UnitOutcome {
  failed: boolean;
  complete: boolean;
}

/**
 * A unit's shard's end status, from its own tests, not its batch-mates': when its Playwright did
 * not pass, a unit whose every test ended takes `failed` or `passed` by its own; a unit with a test
 * that never ended (the run timed out or was interrupted before it) takes Playwright's status, and
 * so does every unit when Playwright reported an error of no test (a global setup's, a config's).
 */
export function unitStatus(overall: ShardEndStatus, unit: UnitOutcome, batchErrors: number): ShardEndStatus {
  if (overall === 'passed' || batchErrors > 0 || !unit.complete) return overall;
  return unit.failed ? 'failed' : 'passed';
}

/** One uploader per unit, each beginning, sending and ending its own shard. */
export class UnitBatch {
  private readonly uploaders = new Map<number, Uploader>();
  private readonly first: Uploader;
  private readonly byTest = new Map<string, number>();
  /** Each unit's tests as listed at start, and the final outcome of each that reached one. */
  private readonly listed = new Map<number, string[]>();
  private readonly finals = new Map<string, string>();

  constructor(
    settings: ReporterSettings,
    private readonly units: UnitsFile['units'],
    onRunEnded: RunEndListener | null = null,
  ) {
    let heard = false;
    const once: RunEndListener = (end) => {
      if (heard) return;
      heard = true;
      onRunEnded?.(end);
    };
    for (const { unit } of units) this.uploaders.set(unit, new Uploader({ ...settings, shard: unit }, once));
    this.first = this.uploaders.get(units[0]?.unit ?? 0) as Uploader;
    for (const unit of units) for (const id of unit.test_ids) this.byTest.set(id, unit.unit);
  }

  get transportOptions(): TransportOptions {
    return this.first.transportOptions;
  }

  runIdOnceStarted(): Promise<number | null> {
    return this.first.runIdOnceStarted();
  }

  start(start: ShardStart): void {
    const tests = new Map<number, ListedTest[]>(this.units.map((unit) => [unit.unit, []]));
    for (const test of start.tests) {
      const unit = this.unitOf(test);
      this.byTest.set(test.id, unit);
      tests.get(unit)?.push(test);
    }
    for (const [unit, listed] of tests)
      this.listed.set(
        unit,
        listed.map((test) => test.id),
      );
    for (const [unit, uploader] of this.uploaders) uploader.start({ ...start, tests: tests.get(unit) ?? [] });
  }

  add(attempt: Attempt): void {
    if (attempt.final) this.finals.set(attempt.test_id, attempt.final.outcome);
    const unit = this.byTest.get(attempt.test_id) ?? this.units[0]?.unit ?? 0;
    (this.uploaders.get(unit) ?? this.first).add(attempt);
  }

  /** Ends every unit with its own status (the batch's errors are each one's), and says what was delivered as one report. */
  async finish(status: ShardEndStatus, errors: string[]): Promise<DeliveryReport> {
    const reports = await Promise.all(
      [...this.uploaders].map(([unit, uploader]) => uploader.finish(unitStatus(status, this.outcomeOf(unit), errors.length), errors)),
    );
    const sum = (field: 'delivered' | 'total' | 'attached' | 'skipped') => reports.reduce((total, report) => total + report[field], 0);
    const last = reports[reports.length - 1] as DeliveryReport;
    return {
      runId: reports.find((report) => report.runId !== null)?.runId ?? null,
      runNumber: reports.find((report) => report.runNumber !== null)?.runNumber ?? null,
      delivered: sum('delivered'),
      total: sum('total'),
      attached: sum('attached'),
      failures: [...new Set(reports.flatMap((report) => report.failures))],
      skipped: sum('skipped'),
      refusedAfterEnd: reports.flatMap((report) => report.refusedAfterEnd),
      state: last.state,
      summaryUrl: last.summaryUrl,
      unreachable: reports.find((report) => report.unreachable)?.unreachable ?? null,
    };
  }

  private outcomeOf(unit: number): UnitOutcome {
    const outcomes = (this.listed.get(unit) ?? []).map((id) => this.finals.get(id));
    return { failed: outcomes.includes('unexpected'), complete: outcomes.every((outcome) => outcome !== undefined) };
  }

  private unitOf(test: ListedTest): number {
    const named = this.byTest.get(test.id);
    if (named !== undefined) return named;
    // A unit's file is relative to the suite's testDir, a listed test's to its config's folder.
    const ofFile = this.units.find(
      (unit) => unit.runner_project === test.runner_project && (test.file_path === unit.file || test.file_path.endsWith(`/${unit.file}`)),
    );
    return ofFile?.unit ?? this.units[0]?.unit ?? 0;
  }
}
