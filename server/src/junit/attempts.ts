import { hash } from 'node:crypto';
import { failureSignature } from '@proctor/reporter/signature';
import { WIRE_LIMITS as LIMIT } from '@proctor/reporter/wire';
import { type Attempt, isStorableStartedAt } from '../runs/index.ts';
import type { ListedTest } from '../testcases/index.ts';
import type { JunitCase, JunitFailure, JunitTotals } from './read.ts';

// A JUnit testcase (or the testcases of one test written one after the other where the format
// marks them as its reruns: see `retryRule`) as the attempts the reporter would have sent: one
// test, its runs in order, the last carrying the final outcome. Pure: the same file gives the same
// rows. The rules are documented in docs/ci.md ("How JUnit XML is read").

// One call, no Hash object a testcase: `hash` is a third of `createHash`'s cost for a short text.
const hex20 = (text: string) => hash('sha256', text, 'hex').slice(0, 20);

/** Where a test lives for its id: its file, else its class (as ids have always been made: they stay). */
function placeOf(testcase: JunitCase): string {
  return testcase.file ?? testcase.classname;
}

/** A Python runner's test: pytest names its testsuite `pytest` (junit_suite_name's default); others name a `.py` file. */
function isPytest(testcase: JunitCase): boolean {
  return testcase.suites.at(-1) === 'pytest' || /\.py$/.test(testcase.file ?? '');
}

/**
 * The file a test lives in, as people name it: `file`, else the module path where the runner puts
 * one in `classname` (pytest: `tests.test_cart` or `tests.test_cart.TestCart` → `tests/test_cart.py`),
 * else the class.
 */
export function fileOf(testcase: JunitCase): string {
  if (testcase.file) return testcase.file;
  // The tests of a class come together: its module path is worked out once for them.
  const suite = testcase.suites.at(-1) ?? null;
  if (lastPlace.classname !== testcase.classname || lastPlace.suite !== suite) {
    lastPlace = { classname: testcase.classname, suite, file: moduleFileOf(testcase) };
  }
  return lastPlace.file;
}

let lastPlace: { classname: string | null; suite: string | null; file: string } = { classname: null, suite: null, file: '' };

/** `fileOf` of a testcase without `file`. */
function moduleFileOf(testcase: JunitCase): string {
  const parts = testcase.classname.split('.');
  const firstClass = parts.findIndex((part) => /^[A-Z]/.test(part));
  const modules = firstClass === -1 ? parts : parts.slice(0, firstClass);
  const module = modules.at(-1) ?? '';
  const python = isPytest(testcase) || /^test_\w+$|^\w+_test$/.test(module);
  if (python && modules.length > 0 && modules.every((part) => /^[A-Za-z_]\w*$/.test(part))) return `${modules.join('/')}.py`;
  return testcase.classname;
}

/** The places whose id half `junitTestId` keeps at once. */
const PLACES_KEPT = 4096;

/**
 * A test's id from its file, class, suites and name: the same in every upload of every build, as
 * a Playwright test's id is. Shaped as the reporter's ids are (20 hex, "-", 20 hex). `places`
 * keeps the first half by file or class, which many tests share.
 */
export function junitTestId(testcase: JunitCase, places?: Map<string, string>): string {
  const place = placeOf(testcase);
  let placeId = places?.get(place);
  if (placeId === undefined) {
    placeId = hex20(`junit\u0000${place}`);
    if (places) {
      // Tests of a place come together, so a cache of the latest places serves as well as one of
      // all, and its memory stays flat in the file's size. Its keys are copies: the reader's
      // strings are slices of the chunks it read, and a slice kept keeps its whole chunk alive.
      if (places.size >= PLACES_KEPT) places.clear();
      places.set(Buffer.from(place, 'utf8').toString('utf8'), placeId);
    }
  }
  // As `[file, classname, ...suites, name].join('\u0000')`, without an array a testcase.
  const suites = testcase.suites.length > 0 ? `${testcase.suites.join('\u0000')}\u0000` : '';
  const test = `${testcase.file ?? ''}\u0000${testcase.classname}\u0000${suites}${testcase.name}`;
  return `${placeId}-${hex20(test)}`;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The test as a shard's list names it; `id` is its `junitTestId`. */
export function listedTest(testcase: JunitCase, id: string = junitTestId(testcase)): ListedTest {
  const place = fileOf(testcase);
  // The first distinct names but the place's, in order: linear in the nesting, and done once a test has its fill.
  const suites: string[] = [];
  const take = (name: string) => {
    if (suites.length < LIMIT.suitesPerTest && name && name !== place && name !== testcase.file && !suites.includes(name)) suites.push(name);
  };
  for (const name of testcase.suites) take(name);
  take(testcase.classname);
  return {
    id,
    title: cut(testcase.name, LIMIT.title),
    file_path: cut(place, LIMIT.title),
    suites: suites.map((name) => cut(name, LIMIT.title)),
    runner_project: '',
    tags: [],
    line: testcase.line,
    column: null,
  };
}

type RunStatus = 'passed' | 'failed' | 'timedOut' | 'skipped';

interface OneRun {
  status: RunStatus;
  ms: number;
  failure: JunitFailure | null;
  skipReason: string | null;
  output: boolean;
}

const ms = (secondsTaken: number | null) => Math.min(Math.max(0, Math.round((secondsTaken ?? 0) * 1000)), 2_147_483_647);

function failedStatus(failure: JunitFailure): RunStatus {
  return /timeout|timed out/i.test(`${failure.type ?? ''} ${failure.message ?? ''}`) ? 'timedOut' : 'failed';
}

/** Why a test was skipped: `<skipped message>`, else a `skip` or `fixme` property (Playwright writes its annotations so). */
function skipReason(testcase: JunitCase): string | null {
  const annotation = testcase.properties.find((property) => (property.name === 'skip' || property.name === 'fixme') && property.value);
  return testcase.skipped?.message || annotation?.value || null;
}

/**
 * A testcase's runs, in order: its own run and the retries it records. Surefire's (and
 * Playwright's) `rerunFailure`s follow a first failure; `flakyFailure`s precede the pass.
 */
function runsOf(testcase: JunitCase, rerunRecord = false): OneRun[] {
  // A rerun record (pytest-rerunfailures writes one per rerun, often empty) is a failed run, whatever it holds.
  if (rerunRecord && !testcase.failure) {
    return [
      ...testcase.retries.map((failure) => ({ status: failedStatus(failure), ms: ms(failure.time), failure, skipReason: null, output: false })),
      { status: 'failed', ms: ms(testcase.time), failure: null, skipReason: null, output: true },
    ];
  }
  const retry = (failure: JunitFailure): OneRun => ({ status: failedStatus(failure), ms: ms(failure.time), failure, skipReason: null, output: false });
  if (testcase.failure) {
    return [
      { status: failedStatus(testcase.failure), ms: ms(testcase.time), failure: testcase.failure, skipReason: null, output: true },
      ...testcase.retries.map(retry),
    ];
  }
  if (testcase.skipped) return [{ status: 'skipped', ms: ms(testcase.time), failure: null, skipReason: skipReason(testcase), output: true }];
  return [...testcase.retries.map(retry), { status: 'passed', ms: ms(testcase.time), failure: null, skipReason: null, output: true }];
}

function outcomeOf(runs: OneRun[]): 'expected' | 'unexpected' | 'flaky' | 'skipped' {
  const ran = runs.filter((run) => run.status !== 'skipped');
  const last = ran.at(-1);
  if (!last) return 'skipped';
  if (last.status !== 'passed') return 'unexpected';
  return ran.some((run) => run.status !== 'passed') ? 'flaky' : 'expected';
}

/** The error as Proctor shows it: `Type: message`, then the text (the stack) when it says more. */
export function errorText(failure: JunitFailure): string {
  const message = failure.message?.trim() ?? '';
  const type = failure.type?.trim() ?? '';
  const head = type && message && !message.startsWith(type) && !/^(failure|error)$/i.test(type) ? `${type}: ${message}` : message || type;
  const text = failure.text.trim();
  const body = text && !head.includes(text) ? (head && text.startsWith(head) ? text : [head, text].filter(Boolean).join('\n\n')) : head;
  return cut(body || failure.element, LIMIT.errorMessage);
}

/** The first frames of a stack: JavaScript's and the JVM's `at …`, Python's `file.py:12: in test`. */
function stackFrames(text: string): string[] | null {
  const frames = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^at\s\S/.test(line) || /^\S+\.py:\d+: in \S/.test(line))
    .slice(0, LIMIT.stackFrames)
    .map((line) => cut(line.replace(/^at\s+/, ''), LIMIT.stackFrame));
  return frames.length > 0 ? frames : null;
}

/** The last timestamp read and what it gave: the testcases of a testsuite share their suite's, read once, not once each. */
let lastStart: { timestamp: string | null; at: string | null } = { timestamp: null, at: null };

function startedAt(testcase: JunitCase): string | null {
  if (testcase.timestamp !== lastStart.timestamp) lastStart = { timestamp: testcase.timestamp, at: readStartedAt(testcase.timestamp) };
  return lastStart.at;
}

function readStartedAt(timestamp: string | null): string | null {
  const at = timestamp ? Date.parse(timestamp) : Number.NaN;
  // A timestamp without a zone is the runner's local time, unknown here: none rather than a wrong one;
  // and none for one the database cannot store (the year 0, past 9999), which would fail the upload.
  if (!Number.isFinite(at) || !/(Z|[+-]\d{2}:?\d{2})$/.test(timestamp as string)) return null;
  const utc = new Date(at).toISOString();
  return isStorableStartedAt(utc) ? utc : null;
}

const tail = (text: string) => (text ? text.slice(-LIMIT.outputTail) : null);

/** Frames of code that is not the project's: the runtimes', the runners', installed packages. */
const NOT_OWN =
  /node_modules|site-packages|dist-packages|\/usr\/lib\/|^node:|\(node:|<anonymous>|^internal\/|\/_pytest\/|\/pluggy\/|^(java|javax|jdk|sun|kotlin|scala|org\.junit|junit\.framework|org\.testng|org\.apache\.maven|org\.gradle|org\.opentest4j|org\.assertj|org\.hamcrest|org\.mockito|org\.spockframework|org\.scalatest|worker\.org\.gradle)\./;

/**
 * Where a failure happened in the project's own files: the first frame of its stack that is not a
 * runtime's, a runner's or a package's (`CartTest.java:42`, `tests/test_cart.py:12`, `src/cart.test.ts:8:5`).
 */
export function ownLocation(text: string): string | null {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const jvm = /^at\s+([\w$.<>]+)\(([^():]+):(\d+)\)/.exec(line);
    if (jvm) {
      if (!NOT_OWN.test(jvm[1] as string)) return `${jvm[2]}:${jvm[3]}`;
      continue;
    }
    const js = /^at\s+(?:.*?\()?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/.exec(line);
    if (js) {
      if (!NOT_OWN.test(js[1] as string)) return `${(js[1] as string).replace(/^file:\/\//, '')}:${js[2]}:${js[3]}`;
      continue;
    }
    const python = /^(?:File "([^"]+)", line (\d+)|([^\s:]+\.py):(\d+):)/.exec(line);
    if (python) {
      const file = (python[1] ?? python[3]) as string;
      if (!NOT_OWN.test(file)) return `${file}:${python[2] ?? python[4]}`;
      continue;
    }
    const other = otherLocation(line);
    if (other) return other;
  }
  return null;
}

/** Frames of .NET's and Go's runtimes, RubyGems' and Dart's packages: never the project's own. */
const NOT_OWN_OTHER =
  /^(System|Microsoft|NUnit|Xunit|MSTest)\.|\/go\/pkg\/mod\/|\/usr\/(local\/)?go\/|\/usr\/lib\/go|^runtime\/|\/gems\/|\/rubygems\/|^package:(test|test_api|test_core|matcher|stack_trace|flutter_test)\/|^dart:/;

/**
 * The frames of the other formats' runners, which only name a file where it is the project's:
 * .NET's `at A.B() in C:\src\CartTests.cs:line 29`, Go's `cart_test.go:19: message` and its
 * panics' `/src/cart.go:42 +0x1d`, RSpec's `./spec/cart_spec.rb:7:in 'block'`, Dart's
 * `test/cart_test.dart 2:3  main`.
 */
function otherLocation(line: string): string | null {
  const dotnet = /^at\s+(\S.*?)\s+in\s+(.+?):line\s+(\d+)$/.exec(line);
  if (dotnet) return NOT_OWN_OTHER.test(dotnet[1] as string) ? null : `${(dotnet[2] as string).split(/[\\/]/).at(-1)}:${dotnet[3]}`;
  const go = /^([^\s:]+\.go):(\d+)(?::\s|\s\+0x[0-9a-f]+$|$)/.exec(line);
  if (go) return NOT_OWN_OTHER.test(go[1] as string) ? null : `${go[1]}:${go[2]}`;
  const ruby = /^(?:#\s+)?([^\s:]+\.rb):(\d+)(?::in\b|$)/.exec(line);
  if (ruby) return NOT_OWN_OTHER.test(ruby[1] as string) ? null : `${(ruby[1] as string).replace(/^\.\//, '')}:${ruby[2]}`;
  const dart = /^(\S+\.dart) (\d+):(\d+)(?:\s|$)/.exec(line);
  if (dart) return NOT_OWN_OTHER.test(dart[1] as string) ? null : `${dart[1]}:${dart[2]}:${dart[3]}`;
  return null;
}

/** One test's attempts, from its testcases in the file's order (more than one: its runs, as `retryRule` reads them); `testId` is their `junitTestId`. */
export function attemptsOf(testcases: JunitCase[], testId: string = junitTestId(testcases[0] as JunitCase), rule: RetryRule | null = null): Attempt[] {
  const first = testcases[0] as JunitCase;
  // Most tests are one testcase that ran once and passed or was skipped: one attempt, built at
  // once (the runs below, their arrays and closures, are most of an upload's garbage).
  if (testcases.length === 1 && !first.failure && first.retries.length === 0) return [singleRun(first, testId)];
  const runs = testcases.flatMap((testcase, index) =>
    runsOf(testcase, rule === 'pytest-rerunfailures' && index < testcases.length - 1).map((run) => ({ run, testcase })),
  );
  const outcome = outcomeOf(runs.map(({ run }) => run));
  const lastFailure = [...runs].reverse().find(({ run }) => run.failure)?.run.failure ?? null;
  const finalError = outcome === 'unexpected' || outcome === 'flaky' ? lastFailure && errorText(lastFailure) : null;
  return runs.slice(0, LIMIT.retries + 1).map(({ run, testcase }, retry, kept) => {
    const error = run.failure ? errorText(run.failure) : null;
    const isFinal = retry === kept.length - 1;
    return {
      test_id: testId,
      retry,
      status: run.status,
      duration: run.ms,
      error_message: error,
      error_location: run.failure ? ownLocation(run.failure.text) : null,
      stdout_tail: run.output ? tail(testcase.systemOut) : null,
      stderr_tail: run.output ? tail(testcase.systemErr) : null,
      started_at: startedAt(testcase),
      final: isFinal
        ? {
            outcome,
            total_duration: Math.min(
              kept.reduce((sum, { run: each }) => sum + each.ms, 0),
              2_147_483_647,
            ),
            error_message: finalError,
            failure_group_id: finalError && lastFailure ? failureSignature({ message: finalError, file: placeOf(first), line: first.line }) : null,
            skip_reason: outcome === 'skipped' ? (run.skipReason ? cut(run.skipReason, LIMIT.skipReason) : null) : null,
            failed_steps: null,
            stack_frames: lastFailure && finalError ? stackFrames(lastFailure.text) : null,
          }
        : null,
    };
  });
}

/** `attemptsOf` of a testcase that ran once, without a failure: passed, or skipped. */
function singleRun(testcase: JunitCase, testId: string): Attempt {
  const skipped = testcase.skipped !== null;
  const duration = ms(testcase.time);
  const reason = skipped ? skipReason(testcase) : null;
  return {
    test_id: testId,
    retry: 0,
    status: skipped ? 'skipped' : 'passed',
    duration,
    error_message: null,
    error_location: null,
    stdout_tail: tail(testcase.systemOut),
    stderr_tail: tail(testcase.systemErr),
    started_at: startedAt(testcase),
    final: {
      outcome: skipped ? 'skipped' : 'expected',
      total_duration: duration,
      error_message: null,
      failure_group_id: null,
      skip_reason: reason ? cut(reason, LIMIT.skipReason) : null,
      failed_steps: null,
      stack_frames: null,
    },
  };
}

/** The files a test's testcases name, each on the attempt whose output named it (the testcase's own run). */
export function attachmentsOf(testcases: JunitCase[], testId: string, rule: RetryRule | null = null): { path: string; test_case_id: string; retry: number }[] {
  const named: { path: string; test_case_id: string; retry: number }[] = [];
  if (testcases.every((testcase) => testcase.attachments.length === 0)) return named;
  let offset = 0;
  for (const [index, testcase] of testcases.entries()) {
    const runs = runsOf(testcase, rule === 'pytest-rerunfailures' && index < testcases.length - 1);
    const retry = offset + runs.findIndex((run) => run.output);
    if (retry <= LIMIT.retries) for (const path of testcase.attachments) named.push({ path, test_case_id: testId, retry });
    offset += runs.length;
  }
  return named;
}

/**
 * Why testcases of one test written one after the other are its runs (retries), not tests of
 * their own; null: they are distinct tests (TestNG's data-provider invocations, Jest's `test.each`
 * cases of one title…), the N-th of a name in its file named `name [N]`.
 *
 * - `pytest-rerunfailures`: the testcases are a Python runner's (the testsuite is named `pytest`,
 *   as pytest names it, or `file` is a `.py` file), which writes a test once unless
 *   pytest-rerunfailures reruns it (then once a run, the reruns often empty: each is a failed
 *   run); or a testcase records a `rerun`, `reruns` or `execution_count` property (as a conftest can).
 * - `gradle-test-retry`: every testcase but the last failed (`failure` or `error`), the last
 *   passed, each names as its class its own testsuite (the JVM runners' per-class files that
 *   Gradle's test-retry plugin writes its retries into), and Maven Surefire did not write the file
 *   (it writes a test's reruns inside one testcase: its repeats are TestNG's invocations).
 *
 * Retries a format marks inside one testcase (Surefire's and Playwright's `rerunFailure`,
 * `rerunError`, `flakyFailure`, `flakyError`) are read by `runsOf`, whatever the rule.
 */
export type RetryRule = 'pytest-rerunfailures' | 'gradle-test-retry';

const RERUN_PROPERTIES = new Set(['rerun', 'reruns', 'execution_count']);

export function retryRule(testcases: JunitCase[]): RetryRule | null {
  if (testcases.length < 2) return null;
  if (testcases.every(isPytest) || testcases.some((testcase) => testcase.properties.some((property) => RERUN_PROPERTIES.has(property.name)))) {
    return 'pytest-rerunfailures';
  }
  const last = testcases.at(-1) as JunitCase;
  const ownClass = testcases.every((testcase) => !testcase.surefire && testcase.classname !== '' && testcase.classname === testcase.suites.at(-1));
  if (ownClass && !last.failure && !last.skipped && testcases.slice(0, -1).every((testcase) => testcase.failure !== null)) return 'gradle-test-retry';
  return null;
}

export const RETRY_RULE_TEXT: Record<RetryRule, string> = {
  'pytest-rerunfailures': "a test's runs as pytest-rerunfailures writes them (pytest writes a test once unless it reruns it)",
  'gradle-test-retry': "a test's runs as Gradle's test-retry plugin writes them (failed runs of one test, one after the other, ending in a pass)",
};

/** A test as the grouper hands it on: its id, its testcases (its runs), and the rule that made them one. */
export interface GroupedTest {
  id: string;
  testcases: JunitCase[];
  rule: RetryRule | null;
}

/** What one file's testcases came to: as Proctor counts them (a test by its final run), and as the file's totals do (each testcase). */
export interface FileCounts {
  testcases: number;
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  /** Testcases read as runs of the test before them, by rule. */
  retries: Partial<Record<RetryRule, number>>;
  /** The testcases counted one by one, as JUnit's totals count them. */
  written: { tests: number; failures: number; errors: number; skipped: number };
}

function kindOf(testcase: JunitCase): 'failures' | 'errors' | 'skipped' | null {
  if (testcase.failure) return testcase.failure.element === 'error' ? 'errors' : 'failures';
  return testcase.skipped ? 'skipped' : null;
}

/**
 * Groups one file's testcases, in the file's order, into tests: testcases of one test written one
 * after the other are held until another test's comes, then read as its runs (`retryRule`) or as
 * tests of their own, the N-th of a name in the file named `name [N]` (the same test in the next
 * upload of the file, so its id is stable). Memory: the ids of the file's tests.
 */
export class FileGrouper {
  private held: JunitCase[] = [];
  private heldId: string | null = null;
  /**
   * The tests of the file so far, each by 52 bits of its id, off the JavaScript heap (a file of
   * 400,000 testcases keeps 8 MB of typed array here, not 50 MB of strings); and how often a
   * repeated one came.
   */
  private readonly seen = new IdSet();
  private readonly repeats = new Map<string, number>();
  readonly counts: FileCounts = {
    testcases: 0,
    tests: 0,
    failures: 0,
    errors: 0,
    skipped: 0,
    retries: {},
    written: { tests: 0, failures: 0, errors: 0, skipped: 0 },
  };

  constructor(
    private readonly places: Map<string, string>,
    private readonly onTest: (test: GroupedTest) => void,
  ) {}

  add(testcase: JunitCase): void {
    const id = junitTestId(testcase, this.places);
    if (id === this.heldId) {
      this.held.push(testcase);
      return;
    }
    this.release();
    this.held = [testcase];
    this.heldId = id;
  }

  /** The file has ended: its last test is complete (a test's runs never span files). */
  end(): FileCounts {
    this.release();
    return this.counts;
  }

  private release(): void {
    const held = this.held;
    const id = this.heldId;
    this.held = [];
    this.heldId = null;
    if (!id || held.length === 0) return;
    for (const testcase of held) {
      this.counts.testcases++;
      this.counts.written.tests++;
      const kind = kindOf(testcase);
      if (kind) this.counts.written[kind]++;
    }
    const rule = retryRule(held);
    if (rule) {
      this.counts.retries[rule] = (this.counts.retries[rule] ?? 0) + held.length - 1;
      this.emit(id, held, rule);
    } else for (const testcase of held) this.emit(id, [testcase], null);
  }

  private emit(baseId: string, testcases: JunitCase[], rule: RetryRule | null): void {
    let nth = 1;
    if (!this.seen.add(baseId)) {
      nth = (this.repeats.get(baseId) ?? 1) + 1;
      this.repeats.set(baseId, nth);
    }
    const named = nth === 1 ? testcases : testcases.map((testcase) => ({ ...testcase, name: `${testcase.name} [${nth}]` }));
    const id = nth === 1 ? baseId : junitTestId(named[0] as JunitCase, this.places);
    this.counts.tests++;
    const last = testcases.at(-1) as JunitCase;
    const outcome = outcomeOfTest(testcases, rule);
    if (outcome === 'skipped') this.counts.skipped++;
    else if (outcome === 'unexpected') this.counts[last.failure?.element === 'error' ? 'errors' : 'failures']++;
    this.onTest({ id, testcases: named, rule });
  }
}

/** A test's outcome from its testcases (as `attemptsOf` works it out): at once for one that ran once without a failure. */
function outcomeOfTest(testcases: JunitCase[], rule: RetryRule | null): ReturnType<typeof outcomeOf> {
  const only = testcases[0] as JunitCase;
  if (testcases.length === 1 && !only.failure && only.retries.length === 0) return only.skipped ? 'skipped' : 'expected';
  return outcomeOf(testcases.flatMap((testcase, index) => runsOf(testcase, rule === 'pytest-rerunfailures' && index < testcases.length - 1)));
}

/**
 * Why a file's counts differ from the totals its testsuites state, one reason a line; none when
 * they agree (or the file states none).
 */
export function countDifferences(counts: FileCounts, totals: JunitTotals | null): string[] {
  if (!totals) return [];
  const ours = { tests: counts.tests, failures: counts.failures, errors: counts.errors, skipped: counts.skipped };
  const keys = ['tests', 'failures', 'errors', 'skipped'] as const;
  if (keys.every((key) => ours[key] === totals[key])) return [];
  const why: string[] = [];
  for (const [rule, n] of Object.entries(counts.retries) as [RetryRule, number][]) {
    if (n > 0) why.push(`${n} testcase(s) read as retries of the test before them: ${RETRY_RULE_TEXT[rule]}; the file's totals count each run`);
  }
  const say = (of: { tests: number; failures: number; errors: number; skipped: number }) => keys.map((key) => `${of[key]} ${key}`).join(', ');
  if (keys.some((key) => counts.written[key] !== totals[key])) {
    why.push(`the file's totals (${say(totals)}) are not those of the testcases it holds (${say(counts.written)}): Proctor counts the testcases`);
  }
  if (why.length === 0) why.push(`counted ${say(ours)} where the file's totals say ${say(totals)}`);
  return why;
}

/**
 * A set of test ids by 52 bits of each (the last 13 hex digits: of the hash of the test's file,
 * class, suites and name), in a typed array that grows by doubling: open addressing, two 32-bit
 * words a slot, 0 for empty. Off the JavaScript heap, so that a heap-capped server reads files of
 * any number of testcases.
 */
export class IdSet {
  private slots = new Uint32Array(2 * 1024);
  private size = 0;

  /** False when the id was there already. */
  add(id: string): boolean {
    const tail = id.slice(-13);
    // 20 bits + 1 (never 0: 0 marks an empty slot) and 32 bits.
    const high = Number.parseInt(tail.slice(0, 5), 16) + 1;
    const low = Number.parseInt(tail.slice(5), 16) >>> 0;
    if ((this.size + 1) * 2 > this.slots.length / 2) this.grow();
    return this.put(high, low);
  }

  private put(high: number, low: number): boolean {
    const mask = this.slots.length / 2 - 1;
    for (let slot = (low ^ Math.imul(high, 0x9e3779b1)) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 2;
      if (this.slots[at] === 0) {
        this.slots[at] = high;
        this.slots[at + 1] = low;
        this.size++;
        return true;
      }
      if (this.slots[at] === high && this.slots[at + 1] === low) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    this.size = 0;
    for (let at = 0; at < old.length; at += 2) if (old[at] !== 0) this.put(old[at] as number, old[at + 1] as number);
  }
}
