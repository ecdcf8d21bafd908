import { JunitFileError, type JunitCase, type JunitTimes } from '../read.ts';
import { JUNIT_LIMITS } from '../schema.ts';
import type { ReaderFactory, ResultFileReader } from './reader.ts';
import { asArray, asObject, blankCase, BoundedText, emptyTimes, failure, LineSplitter, numberOr, parseEventLine, stringOr } from './json-common.ts';

// Dart's and Flutter's JSON reporter (`dart test --reporter json`, `flutter test --machine`): one
// event a line (`start`, `suite`, `group`, `testStart`, `print`, `error`, `testDone`, `done`), read
// line by line. A test is a testcase, its class the suite's path (its file), its suites the path
// and its groups. The runner's hidden tests (`loading test/x_test.dart`, each suite's load) are
// passed over unless they failed (a suite that did not compile). What is kept is bounded: the
// suites' paths and the groups' names (a few per test file), and a test's output until it ends.
// Times are the milliseconds since the run started (the format has no wall-clock time).

interface OpenTest {
  testcase: JunitCase;
  startMs: number | null;
  out: BoundedText;
  error: { message: string; stack: string; isFailure: boolean } | null;
  skipPrint: string | null;
}

class DartJsonReader implements ResultFileReader {
  private readonly lines: LineSplitter;
  private readonly suites = new Map<number, string>();
  private readonly groups = new Map<number, string>();
  private readonly open = new Map<number, OpenTest>();
  cases = 0;
  readonly totals = null;
  readonly times: JunitTimes = emptyTimes();
  private sawEvent = false;
  private lastMs = 0;

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
    if (!this.sawEvent) throw new JunitFileError(this.file, this.lines.line, 'holds no event of Dart\'s JSON reporter (`{"type":"start"…}` a line)');
    const open = this.open.values().next().value as OpenTest | undefined;
    if (open)
      throw new JunitFileError(this.file, this.lines.line, `is cut off: test "${open.testcase.name}", started at line ${open.testcase.atLine}, never ended`);
    this.times.seconds = this.lastMs / 1000;
  }

  private event(text: string, line: number): void {
    if (text.trim() === '') return;
    // `flutter test --machine` writes a few lines of plain text before its events (`Waiting for…`): passed over.
    if (!text.trimStart().startsWith('{')) return;
    const event = parseEventLine(this.file, text, line, "Dart's JSON reporter output");
    this.sawEvent = true;
    const time = numberOr(event.time);
    if (time !== null) this.lastMs = Math.max(this.lastMs, time);
    switch (event.type) {
      case 'suite': {
        const suite = asObject(event.suite);
        const id = numberOr(suite?.id);
        if (id !== null) this.suites.set(id, (stringOr(suite?.path) ?? '').replace(/\\/g, '/'));
        return;
      }
      case 'group': {
        const group = asObject(event.group);
        const id = numberOr(group?.id);
        if (id !== null) this.groups.set(id, stringOr(group?.name) ?? '');
        return;
      }
      case 'testStart':
        return this.start(asObject(event.test), time, line);
      case 'print': {
        const open = this.open.get(numberOr(event.testID) ?? -1);
        const message = stringOr(event.message) ?? '';
        if (!open) return;
        if (event.messageType === 'skip') open.skipPrint ??= message.replace(/^Skip:\s*/, '');
        else open.out.add(`${message}\n`);
        return;
      }
      case 'error': {
        const open = this.open.get(numberOr(event.testID) ?? -1);
        // A test's first error is its failure; later ones (its tearDown's…) join its output.
        if (!open) return;
        const message = stringOr(event.error) ?? '';
        const stack = stringOr(event.stackTrace) ?? '';
        if (open.error) open.out.add(`${message}\n${stack}\n`);
        else open.error = { message, stack, isFailure: event.isFailure === true };
        return;
      }
      case 'testDone':
        return this.done(event, time);
      default:
        return; // start, allSuites, debug, done
    }
  }

  private start(test: Record<string, unknown> | null, time: number | null, line: number): void {
    const id = numberOr(test?.id);
    if (!test || id === null) return;
    const path = this.suites.get(numberOr(test.suiteID) ?? -1) ?? '';
    const groups = asArray(test.groupIDs)
      .map((group) => this.groups.get(numberOr(group) ?? -1) ?? '')
      .filter(Boolean);
    const metadata = asObject(test.metadata);
    // A test of a package the test calls (`url` elsewhere) is written where the test file calls it: `root_line`.
    const testLine = numberOr(test.root_line) ?? numberOr(test.line);
    this.open.set(id, {
      testcase: {
        ...blankCase({ atLine: line }),
        suites: path ? [path, ...groups] : groups,
        file: path || null,
        classname: path,
        name: stringOr(test.name) ?? '',
        line: testLine !== null && testLine > 0 ? testLine : null,
        skipped: metadata?.skip === true ? { message: stringOr(metadata.skipReason) } : null,
      },
      startMs: time,
      out: new BoundedText(JUNIT_LIMITS.outputTail, 'tail'),
      error: null,
      skipPrint: null,
    });
  }

  private done(event: Record<string, unknown>, time: number | null): void {
    const id = numberOr(event.testID) ?? -1;
    const open = this.open.get(id);
    if (!open) return;
    this.open.delete(id);
    const result = stringOr(event.result);
    if (event.hidden === true && result === 'success') return;
    const testcase = open.testcase;
    testcase.time = time !== null && open.startMs !== null ? Math.max(0, time - open.startMs) / 1000 : null;
    testcase.systemOut = open.out.value();
    if (result === 'failure' || result === 'error') {
      const error = open.error;
      const firstLine = error?.message.split('\n').find((text) => text.trim() !== '') ?? null;
      testcase.failure = failure(result, null, firstLine?.trim() ?? null, error ? `${error.message}\n${error.stack}` : '', testcase.time);
      testcase.skipped = null;
    } else if (event.skipped === true) {
      testcase.skipped = { message: testcase.skipped?.message ?? open.skipPrint };
    } else testcase.skipped = null;
    this.cases++;
    this.onCase(testcase);
  }
}

export const readDartJson: ReaderFactory = (file, onCase) => new DartJsonReader(file, onCase);
