import type { SaxesTagPlain } from 'saxes';
import { count, type JunitCase, TIMESTAMP_MAX } from '../read.ts';
import type { BoundedText } from '../testcase.ts';
import { JUNIT_LIMITS } from '../schema.ts';
import { GuidMap } from './guid-map.ts';
import type { ReaderFactory } from './reader.ts';
import { baseName, blankCase, copied, failureText, outputText, withoutClass, XmlResultReader } from './xml.ts';

// TRX, the Visual Studio test results that `dotnet test --logger trx` and vstest write (for
// MSTest, NUnit's and xUnit.net's adapters alike): `Results/UnitTestResult`, each a testcase
// with its `outcome`, `duration`, `Output` (`StdOut`, `StdErr`, `ErrorInfo/Message` and
// `StackTrace`) and `ResultFiles`; data-driven tests' rows as `InnerResults`. A result names its
// test's id; its class is in `TestDefinitions/UnitTest/TestMethod className`, which vstest writes
// AFTER the results. Such a file is read twice (`again`): the first pass keeps only a map from
// each test's id to its class and assembly (bounded by the number of tests in the file: about 40
// bytes a test, off the heap, `GuidMap`; the classes shared), the second hands on each result
// with its class, one at a time. A file with its definitions first is read once. `ResultSummary/Counters` are the totals.

/** What a test's definition tells its results. */
interface Definition {
  classname: string;
  assembly: string;
}

/** The results vstest writes: unit tests', web tests', manual and generic tests', ordered tests' (whose inner results are the tests). */
const RESULTS = new Set(['UnitTestResult', 'WebTestResult', 'ManualTestResult', 'GenericTestResult', 'TestResultAggregation']);

const PASSED = new Set(['passed', 'passedbutrunaborted', 'completed', 'warning']);
const FAILED = new Set(['failed', 'error', 'timeout']);

interface OpenResult {
  value: JunitCase;
  outcome: string;
  hasInner: boolean;
  /** Where its result files lie, relative to the TRX file's folder. */
  folder: string;
  inside: string[];
  out: BoundedText;
  err: BoundedText;
  message: BoundedText;
  stack: BoundedText;
}

/** `00:00:01.2345678` as seconds. */
function duration(raw: string | undefined): number | null {
  const match = raw ? /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(raw.trim()) : null;
  if (!match) return null;
  return Number(match[1] ?? 0) * 86_400 + Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4]);
}

class TrxReader extends XmlResultReader {
  /** Each test's definition by its id: its place in `shared`. */
  private readonly definitions = new GuidMap();
  /** The distinct definitions (class and assembly), each once, by their key and in order. */
  private readonly shared = new Map<string, number>();
  private readonly sharedList: Definition[] = [];
  private pass = 1;
  /** The first pass met results before the definitions were complete: the file is read again. */
  private resultsFirst = false;
  private definitionsRead = false;
  private readonly open_: OpenResult[] = [];
  /** Where the run's result files lie (`TestSettings/Deployment runDeploymentRoot`). */
  private deploymentRoot = '';
  private caseSeconds = 0;
  private runSeconds: number | null = null;
  /** Inside `TestDefinitions/UnitTest`: its id and storage, waiting for its `TestMethod`. */
  private unitTest: { id: string; assembly: string } | null = null;
  /** How deep inside a result the first pass skips (its results wait for the second). */
  private skipping = 0;

  constructor(file: string, onCase: (testcase: JunitCase) => void) {
    super(file, onCase, { name: 'TRX', roots: ['TestRun'] });
  }

  again(): boolean {
    if (this.pass !== 1 || !this.resultsFirst) return false;
    this.pass = 2;
    this.restart();
    return true;
  }

  protected open(tag: SaxesTagPlain): void {
    const a = tag.attributes;
    if (this.skipping > 0) {
      this.skipping++;
      return;
    }
    const current = this.open_.at(-1);
    if (RESULTS.has(tag.name)) return this.openResult(a, current);
    if (current) {
      current.inside.push(tag.name);
      if (tag.name === 'ResultFile' && a.path && current.value.attachments.length < JUNIT_LIMITS.attachmentsPerTest) {
        // A relative path is under the result's folder of the run's deployment (`<root>/In/<result>/`); MSTest's `AddResultFile` may write an absolute one.
        const absolute = /^(?:[A-Za-z]:)?[\\/]/.test(a.path);
        current.value.attachments.push(absolute || !current.folder ? a.path : `${current.folder}/${a.path.replace(/\\/g, '/')}`);
      }
      return;
    }
    // What the first pass took (the definitions, the run's times and totals), the second skips.
    if (this.pass === 2) return;
    if (tag.name === 'Deployment' && a.runDeploymentRoot) this.deploymentRoot = a.runDeploymentRoot;
    else if (tag.name === 'UnitTest' && a.id) this.unitTest = { id: a.id, assembly: baseName(a.storage ?? '') };
    else if (tag.name === 'TestMethod' && this.unitTest) this.define(this.unitTest.id, a.className ?? '', this.unitTest.assembly);
    else if (tag.name === 'Times') {
      this.span(a.start && a.start.length <= TIMESTAMP_MAX ? a.start : undefined, a.finish && a.finish.length <= TIMESTAMP_MAX ? a.finish : undefined);
    } else if (tag.name === 'Counters') this.countersOf(a);
  }

  private define(id: string, classname: string, assembly: string): void {
    // Classes and assemblies are shared by many tests: one copy of each pair.
    const key = `${classname}\u0000${assembly}`;
    let index = this.shared.get(key);
    if (index === undefined) {
      index = this.sharedList.length;
      this.sharedList.push({ classname: copied(classname.trim()), assembly: copied(assembly) });
      this.shared.set(copied(key), index);
    }
    this.definitions.set(id, index);
  }

  private countersOf(a: Record<string, string>): void {
    const total = count(a.total);
    const failures = count(a.failed) + count(a.timeout);
    const errors = count(a.error);
    const passed = count(a.passed) + count(a.passedButRunAborted) + count(a.completed) + count(a.warning);
    this.totals = { tests: total, failures, errors, skipped: Math.max(0, total - passed - failures - errors) };
  }

  private openResult(a: Record<string, string>, parent: OpenResult | undefined): void {
    // Once a result came before the definitions, the second pass reads every result: none twice.
    if (this.pass === 1 && (!this.definitionsRead || this.resultsFirst)) {
      this.resultsFirst = true;
      this.skipping = 1;
      return;
    }
    if (parent) {
      parent.hasInner = true;
      parent.inside.push('#result');
    }
    const index = this.definitions.get(a.testId ?? '');
    const definition = index === undefined ? undefined : this.sharedList[index];
    const classname = definition?.classname ?? '';
    const start = a.startTime && a.startTime.length <= TIMESTAMP_MAX ? a.startTime : null;
    const relative = (a.relativeResultsDirectory ?? '').replace(/\\/g, '/');
    this.open_.push({
      value: blankCase({
        suites: definition?.assembly ? [definition.assembly] : [],
        classname,
        name: withoutClass((a.testName ?? '').trim(), classname) || '(unnamed test)',
        time: duration(a.duration),
        timestamp: start,
        atLine: this.line,
      }),
      outcome: (a.outcome ?? '').toLowerCase(),
      hasInner: false,
      folder: [this.deploymentRoot && `${this.deploymentRoot}/In`, relative].filter(Boolean).join('/'),
      inside: [],
      out: outputText(),
      err: outputText(),
      message: failureText(),
      stack: failureText(),
    });
  }

  protected text(text: string): void {
    const current = this.open_.at(-1);
    if (!current || this.skipping > 0) return;
    const where = current.inside.at(-1);
    const inError = current.inside.includes('ErrorInfo');
    if (where === 'StdOut') current.out.add(text);
    else if (where === 'StdErr') current.err.add(text);
    else if (inError && where === 'Message') current.message.add(text);
    else if (inError && where === 'StackTrace') current.stack.add(text);
  }

  protected close(tag: SaxesTagPlain): void {
    if (this.skipping > 0) {
      this.skipping--;
      return;
    }
    if (tag.name === 'TestDefinitions') this.definitionsRead = true;
    else if (tag.name === 'UnitTest') this.unitTest = null;
    const current = this.open_.at(-1);
    if (!current) return;
    if (!RESULTS.has(tag.name)) {
      current.inside.pop();
      return;
    }
    this.open_.pop();
    this.open_.at(-1)?.inside.pop();
    // A data-driven test's rows are its results: the result around them is their summary.
    if (!current.hasInner) this.closeResult(current);
  }

  private closeResult(result: OpenResult): void {
    const testcase = result.value;
    const message = result.message.value().trim() || null;
    const outcome = result.outcome;
    const out = result.out.value();
    if (FAILED.has(outcome)) {
      testcase.failure = {
        element: outcome === 'error' ? 'error' : 'failure',
        type: outcome === 'timeout' ? 'Timeout' : null,
        message,
        text: result.stack.value(),
        time: null,
      };
    } else if (!PASSED.has(outcome)) {
      // Not run, not runnable, inconclusive, aborted…: the test gave no verdict. xUnit.net's adapter writes the skip's reason as the output.
      const reason = message ?? (out.trim().slice(0, 2000) || null);
      testcase.skipped = { message: reason ?? (outcome || 'not executed') };
    }
    testcase.systemOut = out;
    testcase.systemErr = result.err.value();
    this.caseSeconds += testcase.time ?? 0;
    this.emit(testcase);
  }

  protected finish(): void {
    if (this.pass === 1 && this.times.startMs !== null && this.times.endMs !== null) this.runSeconds = (this.times.endMs - this.times.startMs) / 1000;
    this.times.seconds = this.runSeconds ?? this.caseSeconds;
  }
}

export const trxReader: ReaderFactory = (file, onCase) => new TrxReader(file, onCase);
