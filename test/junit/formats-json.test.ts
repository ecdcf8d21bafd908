import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { detectJsonFormat, JSON_READERS } from '../../server/src/junit/formats/json.ts';
import { WHOLE_DOCUMENT_MAX_CHARS } from '../../server/src/junit/formats/json-common.ts';
import type { ResultFileReader, ResultFormat } from '../../server/src/junit/formats/reader.ts';
import { type JunitCase, JunitFileError } from '../../server/src/junit/read.ts';

// The JSON report formats (`go test -json`, Mocha JSON, RSpec JSON, Dart/Flutter JSON, CTRF) read
// by their readers directly, on real files other projects' runners wrote (test/fixtures/report-corpus,
// with the counts those projects' own tests expect).

const CORPUS = path.join(import.meta.dirname, '../fixtures/report-corpus');

interface Expected {
  file: string;
  format: ResultFormat | null;
  corrupt: boolean;
  counts: { tests: number; failed?: number; failures?: number; errors?: number; skipped: number } | null;
  retries?: Record<string, number>;
  expected_by: string;
}

const { files: corpus } = JSON.parse(fs.readFileSync(path.join(CORPUS, 'expectations.json'), 'utf8')) as { files: Expected[] };

/** Why Proctor's counts differ from a corpus's, on purpose. */
const RULES = {
  testmain:
    "A package that failed with no test failing (its TestMain exited) is a failed testcase `TestMain`, as gotestsum's JUnit names it; gotestsum counts it among its failures but not its tests",
  'mocha-failures':
    "Every failed Mocha test is a `failure`, as Mocha's own `stats.failures` counts them; the action calls one whose error has an `errorMode` (unexpected.js's) an error",
} as const;

const EXCEPTIONS: Record<string, keyof typeof RULES> = {
  'gotestsum/testjson/go-test-json.out': 'testmain',
  'enricomi/mocha/tests.json': 'mocha-failures',
};

interface Read {
  cases: JunitCase[];
  reader: ResultFileReader;
}

/** Every testcase of a text, read in chunks of `chunk` characters (a stream cuts anywhere). */
function read(format: ResultFormat, text: string, name = 'report.json', chunk = 4093): Read {
  const cases: JunitCase[] = [];
  const factory = JSON_READERS[format];
  if (!factory) throw new Error(`no reader for ${format}`);
  const reader = factory(name, (testcase) => cases.push(testcase));
  for (let at = 0; at < text.length; at += chunk) reader.write(text.slice(at, at + chunk));
  reader.end();
  return { cases, reader };
}

const corpusText = (file: string) => fs.readFileSync(path.join(CORPUS, file), 'utf8');

function readCorpus(file: string): Read {
  const text = corpusText(file);
  const format = detectJsonFormat(text.slice(0, 64 * 1024));
  if (!format) throw new Error(`${file}: not detected`);
  return read(format, text, path.basename(file));
}

function countsOf(cases: JunitCase[], want: NonNullable<Expected['counts']>): NonNullable<Expected['counts']> {
  const failed = cases.filter((testcase) => testcase.failure);
  const skipped = cases.filter((testcase) => !testcase.failure && testcase.skipped).length;
  if (want.failures !== undefined) {
    return {
      tests: cases.length,
      failures: failed.filter((testcase) => testcase.failure?.element === 'failure').length,
      errors: failed.filter((testcase) => testcase.failure?.element === 'error').length,
      skipped,
    };
  }
  return { tests: cases.length, failed: failed.length, skipped };
}

function errorOf(step: () => unknown): JunitFileError {
  try {
    step();
  } catch (error) {
    if (error instanceof JunitFileError) return error;
    throw error;
  }
  throw new Error('no error');
}

const byName = (cases: JunitCase[], name: string): JunitCase => {
  const found = cases.find((testcase) => testcase.name === name);
  if (!found) throw new Error(`no testcase ${name}`);
  return found;
};

describe('the corpus of real JSON report files', () => {
  it('when the corpus is counted, then it holds files of each JSON format, each with an expectation from its own repository', () => {
    for (const format of ['go-test-json', 'mocha-json', 'rspec-json', 'dart-json', 'ctrf'] as const) {
      expect(corpus.filter((entry) => entry.format === format && entry.counts && entry.counts.tests > 0).length, format).toBeGreaterThanOrEqual(1);
    }
    for (const entry of corpus) expect(fs.existsSync(path.join(CORPUS, entry.file)), entry.file).toBe(true);
  });

  it('when each file is detected from its first chunk, then it is its format, and a file that is not a report is none', () => {
    const report: string[] = [];
    for (const entry of corpus) {
      const detected = detectJsonFormat(corpusText(entry.file).slice(0, 64 * 1024));
      if (detected !== entry.format) report.push(`${entry.file}: detected ${detected}, is ${entry.format}`);
    }
    expect(report).toEqual([]);
    // Reports of formats read elsewhere are none of these: JUnit XML, Playwright's JSON reporter (its suites hold `tests` and it has `stats`).
    expect(detectJsonFormat('<?xml version="1.0"?>\n<testsuites tests="1"><testsuite name="a" tests="1"/></testsuites>')).toBeNull();
    expect(
      detectJsonFormat(
        '{\n  "config": {},\n  "suites": [{ "title": "a.spec.ts", "specs": [{ "tests": [] }] }],\n  "errors": [],\n  "stats": { "expected": 1 }\n}',
      ),
    ).toBeNull();
  });

  it("when each file is read through its reader, then its counts are its corpus's, or a rule says why not", () => {
    const report: string[] = [];
    for (const entry of corpus) {
      if (!entry.counts) continue;
      const ours = countsOf(readCorpus(entry.file).cases, entry.counts);
      const same = JSON.stringify(ours) === JSON.stringify(entry.counts);
      const rule = EXCEPTIONS[entry.file];
      if (!same && !rule) report.push(`${entry.file}: ${JSON.stringify(ours)} where ${entry.expected_by} says ${JSON.stringify(entry.counts)}`);
      if (same && rule) report.push(`${entry.file}: listed as an exception (${rule}) but its counts agree`);
    }
    expect(report).toEqual([]);
    for (const [file, rule] of Object.entries(EXCEPTIONS)) {
      expect(RULES[rule], file).toBeDefined();
      expect(
        corpus.some((entry) => entry.file === file),
        file,
      ).toBe(true);
    }
  });

  it('when the exceptions are read, then each differs only as its rule says', () => {
    const go = readCorpus('gotestsum/testjson/go-test-json.out').cases;
    expect(go).toHaveLength(60);
    expect(byName(go, 'TestMain')).toMatchObject({
      classname: 'gotest.tools/gotestsum/testjson/internal/badmain',
      failure: { message: 'sometimes main can exit 2' },
    });
    const mocha = readCorpus('enricomi/mocha/tests.json').cases;
    expect(mocha.filter((testcase) => testcase.failure?.element === 'failure')).toHaveLength(2);
  });

  it('when a file states its totals (Mocha stats, RSpec summary, CTRF summary), then they are its totals, and its times are its timestamps', () => {
    const mocha = readCorpus('dorny/mocha-json.json').reader;
    expect(mocha.totals).toEqual({ tests: 6, failures: 4, errors: 0, skipped: 1 });
    expect(mocha.times).toEqual({ startMs: Date.parse('2021-02-24T20:26:09.297Z'), endMs: Date.parse('2021-02-24T20:26:09.309Z'), seconds: 0.012 });
    expect(readCorpus('dorny/rspec-json.json').reader.totals).toEqual({ tests: 3, failures: 1, errors: 0, skipped: 1 });
    const ctrf = readCorpus('ctrf-github-test-reporter/ctrf-reports/ctrf-report.json').reader;
    expect(ctrf.totals).toEqual({ tests: 10, failures: 2, errors: 0, skipped: 3 });
    expect(ctrf.times).toMatchObject({ startMs: 1722511783500, endMs: 1722519283500 });
    const go = readCorpus('dorny/golang-json.json').reader;
    expect(go.totals).toBeNull();
    expect(go.times.startMs).toBe(Date.parse('2025-04-22T08:59:55.364618802-05:00'));
    expect(go.times.seconds).toBeGreaterThan(4);
  });
});

describe('what each format says of a test', () => {
  it('when a go test fails, skips or passes, then its message, output, skip reason, duration and package are read', () => {
    const { cases } = readCorpus('dorny/golang-json.json');
    const failing = byName(cases, 'TestFailing');
    expect(failing).toMatchObject({
      classname: '_/home/james_t/git/test-reporter/reports/go',
      suites: ['_/home/james_t/git/test-reporter/reports/go'],
      time: 0.89,
      timestamp: '2025-04-22T08:59:55.428299886-05:00',
    });
    expect(failing.failure).toMatchObject({ element: 'failure', message: 'calculator_test.go:19: expected 1+1 = 3, got 2' });
    expect(failing.systemOut).toContain('--- FAIL: TestFailing (0.89s)');
    expect(failing.atLine).toBe(7);
    expect(byName(cases, 'TestSkipped').skipped).toEqual({ message: 'calculator_test.go:45: skipping test' });
    expect(byName(cases, 'TestCases/2_+_3_=_4').failure?.message).toBe('calculator_test.go:67: expected 2 + 3 = 4, got 5');
    // A test that failed for its subtests reported nothing of its own: its first failed subtest says why.
    expect(byName(cases, 'TestCases').failure?.message).toBe('subtest TestCases/2_+_3_=_4 failed');
    expect(byName(cases, 'TestPassing')).toMatchObject({ failure: null, skipped: null, time: 0.06 });
  });

  it("when a go test records attributes (go 1.25's t.Attr), then they are its properties", () => {
    const [testcase] = readCorpus('gotestsum/testjson/go-test-json-with-attributes.out').cases;
    expect(testcase?.properties).toEqual([
      { name: 'hello', value: 'world' },
      { name: 'other', value: 'side' },
    ]);
  });

  it("when gotestsum reran failed go tests in the same file, then each is one test, its failed runs its retries as gotestsum's rerun report counts them", () => {
    const entry = corpus.find((each) => each.file === 'gotestsum/cmd/go-test-json-flaky-rerun.out') as Expected;
    const { cases } = readCorpus(entry.file);
    for (const [name, failures] of Object.entries(entry.retries ?? {})) {
      const testcase = byName(cases, name);
      expect(testcase.failure, name).toBeNull();
      expect(testcase.retries, name).toHaveLength(failures);
      expect(testcase.retries[0]?.message, name).toMatch(/^flaky_test\.go:\d+: not this time$/);
    }
    expect(byName(cases, 'TestAlwaysPasses').retries).toEqual([]);
  });

  it('when a go test never ends but its package does (a panic), then it failed with the package output; when the file ends first, it is cut off', () => {
    const { cases } = readCorpus('gotestsum/testjson/go-test-json-missing-test-fail.out');
    expect(cases[0]?.failure?.message).toMatch(/did not end|panic/);
    expect(cases[0]?.failure?.text).toContain('panic:');
    const text = corpusText('dorny/golang-json.json').split('\n');
    const cut = text.slice(0, 9).join('\n');
    const error = errorOf(() => read('go-test-json', cut, 'golang.json'));
    expect(error.message).toMatch(/^golang\.json:\d+: is cut off: test TestFailing/);
  });

  it("when a Mocha test fails or is pending, then its failure has the error's message and stack, its class its suites' titles", () => {
    const { cases } = readCorpus('dorny/mocha-json.json');
    const failing = byName(cases, 'Failing test');
    expect(failing).toMatchObject({ classname: 'Test 1 Test 1.1', time: 0.001 });
    expect(failing.failure?.message).toContain('Expected values to be strictly equal');
    expect(failing.failure?.text).toMatch(/AssertionError[\s\S]*at Context\.<anonymous>/);
    expect(failing.file).toMatch(/main\.test\.js$/);
    expect(byName(cases, 'Skipped test').skipped).toEqual({ message: null });
    expect(byName(cases, 'Timeout test').failure?.message).toMatch(/Timeout of 1ms exceeded/);
  });

  it("when an RSpec example fails or is pending, then its exception's class, message and backtrace, and its pending message, are read", () => {
    const { cases } = readCorpus('dorny/rspec-json.json');
    const failing = byName(cases, 'fails in assertion');
    expect(failing).toMatchObject({
      file: 'spec/config/check_env_vars_spec.rb',
      line: 17,
      classname: 'CheckEnvVars#call when all env vars are defined behaves like success load',
    });
    expect(failing.failure).toMatchObject({ element: 'failure', type: 'RSpec::Mocks::MockExpectationError' });
    expect(failing.failure?.text).toContain("./spec/config/check_env_vars_spec.rb:19:in `block (4 levels) in <top (required)>'");
    expect(byName(cases, 'skips the test').skipped).toEqual({ message: 'Temporarily skipped with xit' });
    expect(failing.atLine).toBeGreaterThan(byName(cases, 'logs success message').atLine);
  });

  it("when a Dart test fails, errs or is skipped, then its error and stack, its skip reason, duration, file, line and groups are read; the runner's hidden load tests are not tests", () => {
    const { cases } = readCorpus('dorny/dart-json.json');
    expect(cases.some((testcase) => testcase.name.startsWith('loading '))).toBe(false);
    const failing = byName(cases, 'Test 1 Test 1.1 Failing test');
    expect(failing).toMatchObject({
      file: 'test/main_test.dart',
      classname: 'test/main_test.dart',
      line: 12,
      time: 0.02,
      suites: ['test/main_test.dart', 'Test 1', 'Test 1 Test 1.1'],
    });
    expect(failing.failure).toMatchObject({ element: 'failure', message: 'Expected: <2>' });
    expect(failing.failure?.text).toContain('test\\main_test.dart 13:9');
    expect(byName(cases, 'Timeout test').failure).toMatchObject({ element: 'error', message: expect.stringContaining('TimeoutException') });
    expect(byName(cases, 'Skipped test').skipped).toEqual({ message: 'skipped test' });
    expect(byName(cases, 'Test 1 Passing test').systemOut).toBe('');
  });

  it('when a CTRF test failed, was retried or skipped, then its message and trace, retries, suite, file and skip are read', () => {
    const { cases } = readCorpus('ctrf-github-test-reporter/ctrf-reports/ctrf-report.json');
    const failing = byName(cases, 'should display title');
    expect(failing).toMatchObject({ file: 'tests/login.test.ts', suites: ['login.test.ts', 'profile'], classname: 'login.test.ts > profile', time: 0.8 });
    expect(failing.failure?.message).toContain('Timed out 5000ms waiting for');
    expect(failing.failure?.text).toBe('ProfileTest.js:45');
    const flaky = byName(cases, 'should be able to update profile');
    expect(flaky.failure).toBeNull();
    expect(flaky.retries).toHaveLength(2);
    expect(flaky.properties).toContainEqual({ name: 'flaky', value: 'true' });
    expect(byName(cases, 'should be able to logout').skipped).toEqual({ message: 'skipped' });
  });

  it("when CTRF's own examples are read, then suites as a list, retry attempts, labels, attachments, output and times are read", () => {
    const comprehensive = readCorpus('ctrf-spec/examples/comprehensive.json');
    const login = byName(comprehensive.cases, 'user can login');
    expect(login).toMatchObject({
      suites: ['Authentication', 'Login'],
      classname: 'Authentication > Login',
      file: 'tests/auth/login.test.js',
      time: 3.5,
      timestamp: '2021-01-01T00:00:00.000Z',
    });
    expect(login.properties).toEqual(
      expect.arrayContaining([
        { name: 'tag', value: 'smoke' },
        { name: 'label.priority', value: 'P1' },
        { name: 'label.owners', value: 'qa, platform' },
      ]),
    );
    const checkout = byName(comprehensive.cases, 'user can checkout');
    expect(checkout.failure).toBeNull();
    expect(checkout.retries).toHaveLength(1);
    const dashboard = byName(comprehensive.cases, 'admin dashboard loads');
    expect(dashboard).toMatchObject({ line: 42, failure: { element: 'failure' } });
    expect(dashboard.failure?.message).toBeTruthy();
    expect(dashboard.failure?.text).toBeTruthy();
    expect(comprehensive.reader.times).toEqual({ startMs: 1609459200000, endMs: 1609459220000, seconds: 20 });
    const [retried] = readCorpus('ctrf-spec/examples/with-retries.json').cases.filter((testcase) => testcase.name === 'flaky test');
    expect(retried?.retries.map((retry) => [retry.message, retry.time])).toEqual([
      ['Connection timeout', 0.12],
      ['Connection timeout', 0.13],
    ]);
    const [diagnosed] = readCorpus('ctrf-spec/examples/with-diagnostics.json').cases;
    expect(diagnosed?.attachments).toEqual(expect.arrayContaining(['/artifacts/screenshots/test-1.png', '/artifacts/logs/console-1.txt']));
    expect(diagnosed?.systemErr).toBe('Warning: Network slow\nError: Element not found after 5000ms');
  });

  it('when a CTRF test names attachments, its retry attempts and its output, then they are read', () => {
    const document = {
      reportFormat: 'CTRF',
      specVersion: '0.0.0',
      results: {
        tool: { name: 'playwright' },
        summary: { tests: 1, passed: 1, failed: 0, skipped: 0, pending: 0, other: 0, start: 1764316800000, stop: 1764316801000 },
        tests: [
          {
            name: 'checks out',
            status: 'passed',
            duration: 1000,
            suite: ['cart.spec.ts', 'cart'],
            filePath: 'tests/cart.spec.ts',
            line: 12,
            retries: 1,
            flaky: true,
            retryAttempts: [{ attempt: 1, status: 'failed', duration: 400, message: 'expect(received).toBe(expected)', trace: 'at tests/cart.spec.ts:14:5' }],
            attachments: [{ name: 'screenshot', contentType: 'image/png', path: 'test-results/cart/screenshot.png' }],
            stdout: ['adding an item'],
            stderr: ['a warning'],
          },
        ],
      },
    };
    const [testcase] = read('ctrf', JSON.stringify(document, null, 2)).cases;
    expect(testcase).toMatchObject({
      attachments: ['test-results/cart/screenshot.png'],
      systemOut: 'adding an item',
      systemErr: 'a warning',
      line: 12,
      timestamp: null,
      retries: [{ element: 'failure', message: 'expect(received).toBe(expected)', text: 'at tests/cart.spec.ts:14:5', time: 0.4 }],
    });
  });
});

describe('files that are broken', () => {
  it('when a line of a line-delimited file is broken, then the error names the file and that line', () => {
    const lines = corpusText('dorny/golang-json.json').split('\n');
    lines[4] = (lines[4] as string).slice(0, 40);
    const error = errorOf(() => read('go-test-json', lines.join('\n'), 'golang.json'));
    expect(error).toMatchObject({ file: 'golang.json', line: 5 });
    expect(error.message).toMatch(/^golang\.json:5: is not `go test -json` output: this line is not JSON/);
    const dart = corpusText('dorny/dart-json.json');
    const cut = dart.slice(0, dart.indexOf('"type":"testDone"') + 5);
    expect(errorOf(() => read('dart-json', cut, 'dart.json')).line).toBe(cut.split('\n').length);
  });

  it('when a document format is cut or broken, then the error names the file and the line where it breaks', () => {
    const mocha = corpusText('dorny/mocha-json.json');
    const cut = mocha.slice(0, Math.floor(mocha.length / 2));
    const error = errorOf(() => read('mocha-json', cut, 'mocha.json'));
    expect(error.file).toBe('mocha.json');
    expect(error.message).toMatch(/^mocha\.json:\d+: is not Mocha JSON: it is not well-formed JSON/);
    const broken = corpusText('dorny/rspec-json.json').replace('"status": "failed"', '"status": failed');
    const line = broken.slice(0, broken.indexOf('"status": failed')).split('\n').length;
    expect(errorOf(() => read('rspec-json', broken, 'rspec.json')).line).toBe(line);
    expect(errorOf(() => read('ctrf', '', 'ctrf.json')).message).toBe('ctrf.json:1: is empty: CTRF is a JSON document');
  });

  it('when a document is larger than the cap, then it is refused with a line naming the cap, as soon as it passes it', () => {
    const factory = JSON_READERS['mocha-json'];
    const reader = factory?.('big.json', () => undefined) as ResultFileReader;
    const megabyte = `${' '.repeat(1024 * 1024 - 1)}\n`;
    const error = errorOf(() => {
      for (let written = 0; written <= WHOLE_DOCUMENT_MAX_CHARS; written += megabyte.length) reader.write(megabyte);
    });
    expect(error.message).toBe('big.json:65: is more than 64 MB of Mocha JSON: a Mocha JSON file is one JSON document, read whole, up to that size');
  });
});

/** A full garbage collection, so that the heap measured is what is kept (V8's `gc`, reached without a flag on the command line). */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

describe('a long go test -json stream', () => {
  it('when 200,000 events (over 100 MB) are read, then the memory kept stays flat: a test is kept only until it ends', () => {
    let cases = 0;
    const reader = JSON_READERS['go-test-json']?.('long.json', () => cases++) as ResultFileReader;
    const events = 200_000;
    const output = `    work_test.go:10: ${'x'.repeat(1000)}\n`;
    const batch = (from: number, to: number): string => {
      const lines: string[] = [];
      for (let n = from; n < to; n++) {
        const action = ['run', 'output', 'output', n % 400 === 3 ? 'fail' : 'pass'][n % 4] as string;
        const event: Record<string, unknown> = {
          Time: new Date(Date.UTC(2026, 10, 28, 8, 0, 0) + n).toISOString(),
          Action: action,
          Package: `example.com/app/pkg${Math.floor(n / 4000)}`,
          Test: `TestNumber${Math.floor(n / 4)}`,
        };
        if (action === 'output') event.Output = output;
        if (action === 'pass' || action === 'fail') event.Elapsed = 0.001;
        lines.push(JSON.stringify(event));
      }
      return `${lines.join('\n')}\n`;
    };
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    let kept = 0;
    let read = 0;
    for (let from = 0; from < events; from += 2000) {
      const text = batch(from, from + 2000);
      read += text.length;
      reader.write(text);
      if (from % 40_000 === 0) {
        collectGarbage();
        kept = Math.max(kept, process.memoryUsage().heapUsed - before);
      }
    }
    reader.end();
    expect(cases).toBe(events / 4);
    expect(read).toBeGreaterThan(100_000_000);
    // A reader that kept the output it read would hold over 100 MB here.
    expect(kept).toBeLessThan(32 * 1024 * 1024);
  });
});
