import { JunitFileError, type JunitCase, type JunitFailure, type JunitTimes } from '../read.ts';
import { JUNIT_LIMITS } from '../schema.ts';
import type { ReaderFactory, ResultFileReader } from './reader.ts';
import { blankCase, BoundedText, emptyTimes, failure, instantMs, LineSplitter, numberOr, parseEventLine, stringOr, widen } from './json-common.ts';

// `go test -json` (test2json's events, one JSON object a line: `run`, `output`, `pass`, `fail`,
// `skip`… of a `Test` in a `Package`, and the package's own), read line by line. A test is a
// testcase (a subtest too, named `TestX/sub`, as `go test` and gotestsum count them); its class is
// its package. What is kept is bounded whatever the file's size: a test's output only until the
// test ends (its tail, as JUnit's output is kept), and a package's own output's tail until the
// package ends.
//
// Retries: a test run again in the file after it failed (`gotestsum --rerun-fails` appends its
// reruns; `-count=N` runs a test N times) is one test with those runs: its failed runs are its
// retries and its last run its outcome. A failed test is therefore held until it runs again or
// the file ends (at most HELD_MAX of them, the oldest handed on beyond). Repeats after a pass are
// tests of their own (the upload names the N-th `name [N]`).

const HELD_MAX = 2000;

/** Lines of a test's output that `go test` writes around it, not the test's own. */
const FRAMING = /^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)\s|--- (?:PASS|FAIL|SKIP|BENCH):\s|(?:PASS|FAIL)\s*$|ok\s+\S+\s)/;

interface OpenTest {
  name: string;
  pkg: string;
  atLine: number;
  timestamp: string | null;
  out: BoundedText;
  /** Its output but for the framing lines: the failure's text or the skip's reason. */
  own: BoundedText;
}

interface Pkg {
  running: Map<string, OpenTest>;
  out: BoundedText;
  /** A test of it failed. */
  failed: boolean;
  /** A running test's first failed subtest, by the test's name: what its own failure says. */
  failedSubtests: Map<string, string>;
}

class GoTestJsonReader implements ResultFileReader {
  private readonly lines: LineSplitter;
  private readonly packages = new Map<string, Pkg>();
  /** Failed tests waiting for a rerun, by package and name. */
  private readonly held = new Map<string, JunitCase>();
  cases = 0;
  readonly totals = null;
  readonly times: JunitTimes = emptyTimes();
  private caseSeconds = 0;

  constructor(
    private readonly file: string,
    private readonly onCase: (testcase: JunitCase) => void,
  ) {
    this.lines = new LineSplitter(file, (text, line) => this.event(text, line));
  }

  get line(): number {
    return this.lines.line;
  }

  write(chunk: string): void {
    this.lines.write(chunk);
  }

  end(): void {
    this.lines.end();
    for (const [pkg, state] of this.packages) {
      const open = state.running.values().next().value as OpenTest | undefined;
      if (open) {
        throw new JunitFileError(
          this.file,
          this.lines.line,
          `is cut off: test ${open.name} of package ${pkg}, started at line ${open.atLine}, never ended, nor did its package`,
        );
      }
    }
    for (const testcase of this.held.values()) this.hand(testcase);
    this.held.clear();
    this.times.seconds = this.times.startMs !== null && this.times.endMs !== null ? (this.times.endMs - this.times.startMs) / 1000 : this.caseSeconds;
  }

  private event(text: string, line: number): void {
    // `go test` writes a build's errors and some runners' stray prints as plain text between the events: not JSON, passed over.
    if (!text.trimStart().startsWith('{')) return;
    const event = parseEventLine(this.file, text, line, '`go test -json` output');
    const action = stringOr(event.Action);
    // `test2json` run on a test binary writes no Package; go 1.24's build events name an ImportPath instead, and no Test.
    const pkg = stringOr(event.Package) ?? '';
    if (action === null || (event.Package === undefined && event.Test === undefined)) return;
    const time = stringOr(event.Time);
    widen(this.times, instantMs(time));
    const test = stringOr(event.Test);
    const state = this.packageOf(pkg);
    if (test === null) {
      if (action === 'output') state.out.add(stringOr(event.Output) ?? '');
      else if (action === 'pass' || action === 'fail' || action === 'skip') this.endPackage(pkg, state, action, time, numberOr(event.Elapsed), line);
      return;
    }
    switch (action) {
      case 'run':
        state.running.set(test, {
          name: test,
          pkg,
          atLine: line,
          timestamp: time,
          out: new BoundedText(JUNIT_LIMITS.outputTail, 'tail'),
          own: new BoundedText(JUNIT_LIMITS.failureText, 'head'),
        });
        return;
      case 'output': {
        const output = stringOr(event.Output) ?? '';
        const open = state.running.get(test);
        if (!open) return state.out.add(output);
        open.out.add(output);
        if (!FRAMING.test(output)) open.own.add(output);
        return;
      }
      case 'attr': {
        const open = state.running.get(test);
        const key = stringOr(event.Key);
        if (open && key !== null) this.attributes(open).push({ name: key.slice(0, 200), value: (stringOr(event.Value) ?? '').slice(0, 2000) });
        return;
      }
      case 'pass':
      case 'fail':
      case 'skip': {
        // An end without a run (go before 1.14 wrote none for some tests): the test is read from here.
        const open = state.running.get(test) ?? {
          name: test,
          pkg,
          atLine: line,
          timestamp: time,
          out: new BoundedText(1, 'tail'),
          own: new BoundedText(1, 'head'),
        };
        state.running.delete(test);
        if (action === 'fail') {
          state.failed = true;
          const parent = test.slice(0, Math.max(0, test.lastIndexOf('/')));
          if (parent && state.running.has(parent) && !state.failedSubtests.has(parent)) state.failedSubtests.set(parent, test);
        }
        const subtest = state.failedSubtests.get(test);
        state.failedSubtests.delete(test);
        this.endTest(open, action, numberOr(event.Elapsed), null, subtest ?? null);
        return;
      }
      default:
        return; // pause, cont, bench, start
    }
  }

  private readonly pendingAttributes = new WeakMap<OpenTest, { name: string; value: string }[]>();

  private attributes(open: OpenTest): { name: string; value: string }[] {
    let list = this.pendingAttributes.get(open);
    if (!list) this.pendingAttributes.set(open, (list = []));
    return list;
  }

  private packageOf(pkg: string): Pkg {
    let state = this.packages.get(pkg);
    if (!state)
      this.packages.set(
        pkg,
        (state = { running: new Map(), out: new BoundedText(JUNIT_LIMITS.failureText, 'tail'), failed: false, failedSubtests: new Map() }),
      );
    return state;
  }

  /**
   * A package ended: its tests still running did not end (a panic, a timeout): they failed, with the
   * package's output. A package that failed with no test failing (its TestMain, its `init`, a crash
   * between tests) is a failed testcase `TestMain`, as gotestsum counts and names it.
   */
  private endPackage(pkg: string, state: Pkg, action: string, time: string | null, elapsed: number | null, line: number): void {
    const output = state.out.value();
    for (const open of state.running.values()) {
      open.own.add(output);
      state.failed = true;
      this.endTest(open, 'fail', null, `the test did not end: its package ${action === 'fail' ? 'failed' : 'ended'} while it ran`);
    }
    if (action === 'fail' && !state.failed) {
      const own = new BoundedText(JUNIT_LIMITS.failureText, 'head');
      const out = new BoundedText(JUNIT_LIMITS.outputTail, 'tail');
      for (const text of output.split(/(?<=\n)/)) {
        out.add(text);
        if (!FRAMING.test(text) && !text.startsWith(`FAIL\t${pkg}`)) own.add(text);
      }
      this.endTest({ name: 'TestMain', pkg, atLine: line, timestamp: time, out, own }, 'fail', elapsed, null);
    }
    this.packages.delete(pkg);
  }

  /** `subtest`: its first failed subtest, which says why a test failed that reported nothing of its own. */
  private endTest(open: OpenTest, action: 'pass' | 'fail' | 'skip', elapsed: number | null, problem: string | null, subtest: string | null = null): void {
    const own = open.own.value();
    const lines = own
      .split('\n')
      .map((text) => text.trim())
      .filter(Boolean);
    const testcase: JunitCase = {
      ...blankCase({ atLine: open.atLine }),
      suites: [open.pkg],
      classname: open.pkg,
      name: open.name,
      time: elapsed !== null && elapsed >= 0 ? elapsed : null,
      timestamp: open.timestamp,
      systemOut: open.out.value(),
      properties: this.pendingAttributes.get(open)?.slice(0, JUNIT_LIMITS.properties) ?? [],
    };
    if (action === 'skip') testcase.skipped = { message: lines[0]?.slice(0, 2000) ?? null };
    if (action === 'fail') {
      const panic = lines.find((text) => text.startsWith('panic:'));
      // The test's own report (`t.Error`'s `file_test.go:12: …`) over what it printed before.
      // (go before 1.14 wrote it after the test's name: `TestX: file_test.go:12: …`).
      const reported = lines.find((text) => /^(?:\S+: )?\S+\.go:\d+: /.test(text))?.replace(/^(?!\S+\.go:)\S+: /, '');
      testcase.failure = failure(
        'failure',
        panic ? 'panic' : null,
        problem ?? panic ?? reported ?? lines[0] ?? (subtest ? `subtest ${subtest} failed` : null),
        own,
        testcase.time,
      );
    }
    this.caseSeconds += testcase.time ?? 0;
    const key = `${open.pkg}\u0000${open.name}`;
    const earlier = this.held.get(key);
    if (earlier) {
      this.held.delete(key);
      if (action === 'skip') this.hand(earlier);
      else if (action === 'pass') {
        testcase.retries = [earlier.failure as JunitFailure, ...earlier.retries].slice(0, JUNIT_LIMITS.retries);
        return this.hand(testcase);
      } else {
        // Failed again: one more failed run of the test held.
        if (earlier.retries.length < JUNIT_LIMITS.retries) earlier.retries.push(testcase.failure as JunitFailure);
        earlier.systemOut = testcase.systemOut;
        this.held.set(key, earlier);
        return;
      }
    }
    if (action !== 'fail') return this.hand(testcase);
    this.held.set(key, testcase);
    if (this.held.size > HELD_MAX) {
      const [oldest, value] = this.held.entries().next().value as [string, JunitCase];
      this.held.delete(oldest);
      this.hand(value);
    }
  }

  private hand(testcase: JunitCase): void {
    this.cases++;
    this.onCase(testcase);
  }
}

export const readGoTestJson: ReaderFactory = (file, onCase) => new GoTestJsonReader(file, onCase);
