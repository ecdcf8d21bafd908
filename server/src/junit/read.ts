import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { InvalidInputError } from '../errors.ts';
import type { ResultFileReader } from './formats/reader.ts';
import { BoundedText, type JunitCase, type JunitFailure, type JunitTimes, type JunitTotals } from './testcase.ts';
import { JUNIT_LIMITS } from './schema.ts';

// JUnit XML as the runners write it, read as a stream: one testcase at a time, whatever the file's
// size. The format has no single standard; this reads the common core (Ant's and Surefire's
// `testsuites`/`testsuite`/`testcase` with `failure`, `error`, `skipped`, `system-out`,
// `system-err` and `properties`) and Surefire's retries (`rerunFailure`, `rerunError`,
// `flakyFailure`, `flakyError`), which Playwright's `junit` reporter also writes.

export type { JunitCase, JunitFailure, JunitTimes, JunitTotals } from './testcase.ts';

/** A file that is not JUnit XML, or is broken: its name, the line, and what is wrong (a 400). */
export class JunitFileError extends InvalidInputError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${file}:${line}: ${problem}`);
  }
}

const RETRY_ELEMENTS = new Set(['rerunFailure', 'rerunError', 'flakyFailure', 'flakyError']);

const ATTACHMENT = /\[\[ATTACHMENT\|([^\]\n]{1,1000})\]\]/g;

function attachmentsIn(output: string): string[] {
  // Most output names no file: a search, not a regular expression's matches and two arrays.
  if (!output.includes('[[ATTACHMENT|')) return [];
  return [...new Set([...output.matchAll(ATTACHMENT)].map((match) => (match[1] as string).trim()))].slice(0, JUNIT_LIMITS.attachmentsPerTest);
}

export function seconds(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === '') return null;
  const value = Number(raw.replace(/,/g, ''));
  return Number.isFinite(value) && value >= 0 ? value : null;
}

function totalsOf(a: Record<string, string>): JunitTotals {
  // Google Test counts its disabled tests apart from those it skipped.
  return { tests: count(a.tests), failures: count(a.failures), errors: count(a.errors), skipped: count(a.skipped ?? a.skip) + count(a.disabled) };
}

function lineNumber(raw: string | undefined): number | null {
  return raw && /^\d{1,9}$/.test(raw) ? Number(raw) : null;
}

/**
 * An open testsuite and what its testcases inherit, worked out once as it opens: a testcase only
 * points at it (`names` is shared, never changed), so a testcase costs the same at any depth.
 */
interface Suite {
  /** The non-empty names of the testsuites down to this one, outermost first. */
  names: string[];
  file: string | null;
  timestamp: string | null;
  /** Its totals, or an outer testsuite's, are counted in the file's. */
  counted: boolean;
  /** Its time, or an outer testsuite's, is counted in the file's. */
  timed: boolean;
  surefire: boolean;
}

export function count(raw: string | undefined): number {
  return raw && /^\s*\d{1,9}\s*$/.test(raw) ? Number(raw) : 0;
}

/** A `timestamp` with a zone as milliseconds; null without one (the runner's local time, unknown here). */
export function zonedMs(timestamp: string | null): number | null {
  if (!timestamp || !/(Z|[+-]\d{2}:?\d{2})$/.test(timestamp)) return null;
  const at = Date.parse(timestamp);
  return Number.isFinite(at) ? at : null;
}

// The characters XML 1.0 forbids are the point of this expression.
// eslint-disable-next-line no-control-regex
const DISALLOWED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
const DISALLOWED_ALL = new RegExp(DISALLOWED.source, 'g');

/** Control characters XML 1.0 does not allow, which runners copy from a test's output (colours' ESC): read as U+FFFD. */
export function allowedXmlText(chunk: string): string {
  return DISALLOWED.test(chunk) ? chunk.replace(DISALLOWED_ALL, '\uFFFD') : chunk;
}

/** Longer than any timestamp a runner writes: not one, and not parsed again for every testcase. */
export const TIMESTAMP_MAX = 64;

interface OpenCase {
  value: JunitCase;
  out: BoundedText;
  err: BoundedText;
}

interface OpenFailure {
  value: JunitFailure;
  text: BoundedText;
}

/**
 * Runs a step of an XML file's parser (a chunk written, the end): what saxes throws becomes a 400
 * naming the file and the line it reached; a reader's own `JunitFileError` passes as it is.
 */
export function parseStep(file: string, parser: SaxesParser, step: () => void): void {
  try {
    step();
  } catch (error) {
    if (error instanceof JunitFileError) throw error;
    const message = (error as Error).message.replace(/^(?:[^:]*:)?\d+:\d+: /, '');
    throw new JunitFileError(file, parser.line, `is not well-formed XML: ${message}`);
  }
}

/**
 * Reads one file's chunks (text, in order) and hands each testcase to `onCase` as its element
 * closes. Throws `JunitFileError` for broken XML and for a root that is not JUnit's.
 */
export class JunitReader implements ResultFileReader {
  private readonly parser: SaxesParser;
  private readonly suites: Suite[] = [];
  /** What the text being read belongs to: the element names open inside the current testcase. */
  private readonly inside: string[] = [];
  private current: OpenCase | null = null;
  private failure: OpenFailure | null = null;
  private sawRoot = false;
  cases = 0;
  /** The file's totals as its testsuites state them; null when none does. */
  totals: JunitTotals | null = null;
  private rootTotals: JunitTotals | null = null;
  readonly times: JunitTimes = { startMs: null, endMs: null, seconds: 0 };
  private suiteSeconds = 0;
  private caseSeconds = 0;

  constructor(
    private readonly file: string,
    private readonly onCase: (testcase: JunitCase) => void,
  ) {
    this.parser = new SaxesParser({ position: true });
    this.parser.on('opentag', (tag) => this.open(tag as SaxesTagPlain));
    this.parser.on('closetag', (tag) => this.close(tag as SaxesTagPlain));
    this.parser.on('text', (text) => this.text(text));
    this.parser.on('cdata', (text) => this.text(text));
  }

  /** The line the reader has reached. */
  get line(): number {
    return this.parser.line;
  }

  write(chunk: string): void {
    const text = allowedXmlText(chunk);
    this.guard(() => this.parser.write(text));
  }

  end(): void {
    if (!this.sawRoot) throw new JunitFileError(this.file, this.parser.line, 'holds no element: JUnit XML has a <testsuites> or <testsuite> element');
    this.guard(() => this.parser.close());
    this.totals ??= this.rootTotals;
    this.times.seconds = this.suiteSeconds > 0 ? this.suiteSeconds : this.caseSeconds;
  }

  private guard(step: () => void): void {
    parseStep(this.file, this.parser, step);
  }

  private fail(problem: string): never {
    throw new JunitFileError(this.file, this.parser.line, problem);
  }

  private open(tag: SaxesTagPlain): void {
    const a = tag.attributes;
    if (!this.sawRoot) {
      if (tag.name !== 'testsuites' && tag.name !== 'testsuite') {
        this.fail(`is not JUnit XML: its root element is <${tag.name}>, where JUnit XML has <testsuites> or <testsuite>`);
      }
      this.sawRoot = true;
      if (tag.name === 'testsuites' && a.tests !== undefined) this.rootTotals = totalsOf(a);
    }
    if (this.current) return this.openInCase(tag);
    if (tag.name === 'testsuite') this.openSuite(a);
    else if (tag.name === 'property' && a.name?.startsWith('surefire.')) {
      const suite = this.suites.at(-1);
      if (suite) suite.surefire = true;
    } else if (tag.name === 'testcase') {
      const suite = this.suites.at(-1);
      this.current = {
        // Every field written out (not `blankCase`'s spread): one object a testcase, of one shape.
        value: {
          suites: suite?.names ?? [],
          file: a.file ?? suite?.file ?? null,
          // jest-junit's defaults start names with a space.
          classname: (a.classname ?? '').trim(),
          name: (a.name ?? '').trim(),
          line: lineNumber(a.line),
          time: seconds(a.time),
          timestamp: suite?.timestamp ?? null,
          skipped: null,
          failure: null,
          retries: [],
          properties: [],
          systemOut: '',
          systemErr: '',
          attachments: [],
          atLine: this.parser.line,
          surefire: suite?.surefire ?? false,
        },
        out: new BoundedText(JUNIT_LIMITS.outputTail, 'tail'),
        err: new BoundedText(JUNIT_LIMITS.outputTail, 'tail'),
      };
      // A testcase without a name (xUnit's theories, hand-made files) is named by its class, else so.
      if (!this.current.value.name) this.current.value.name = this.current.value.classname || '(unnamed testcase)';
      // Google Test marks a disabled test so, with no <skipped>.
      if (a.status && /^(disabled|notrun|skipped)$/i.test(a.status)) this.current.value.skipped = { message: a.status.toLowerCase() };
    }
  }

  /**
   * Nesting is bounded (in depth, and in the characters a testcase inherits), so that what each
   * testcase costs is bounded too and reading stays linear in the file's size.
   */
  private openSuite(a: Record<string, string>): void {
    const outer = this.suites.at(-1);
    if (this.suites.length >= JUNIT_LIMITS.depth) {
      this.fail(`testsuites nest deeper than ${JUNIT_LIMITS.depth} levels here: JUnit XML of a test runner nests a few`);
    }
    const name = a.name ?? '';
    const names = name ? [...(outer?.names ?? []), name] : (outer?.names ?? []);
    const file = a.file ?? outer?.file ?? null;
    // What every testcase inside hashes into its id.
    const chars = names.reduce((sum, each) => sum + each.length, 0) + (file?.length ?? 0);
    if (chars > JUNIT_LIMITS.suiteChars) {
      this.fail(`the testsuites open here have names (and a file) of more than ${JUNIT_LIMITS.suiteChars.toLocaleString('en')} characters together`);
    }
    const timestamp = a.timestamp ?? outer?.timestamp ?? null;
    const counted = (outer?.counted ?? false) || a.tests !== undefined;
    if (counted && !outer?.counted) {
      const own = totalsOf(a);
      const sum = (this.totals ??= { tests: 0, failures: 0, errors: 0, skipped: 0 });
      sum.tests += own.tests;
      sum.failures += own.failures;
      sum.errors += own.errors;
      sum.skipped += own.skipped;
    }
    const time = seconds(a.time);
    const timed = (outer?.timed ?? false) || time !== null;
    if (time !== null && !outer?.timed) this.suiteSeconds += time;
    const start = a.timestamp && a.timestamp.length <= TIMESTAMP_MAX ? zonedMs(a.timestamp) : null;
    if (start !== null) {
      this.times.startMs = Math.min(this.times.startMs ?? start, start);
      const end = start + Math.round((time ?? 0) * 1000);
      this.times.endMs = Math.max(this.times.endMs ?? end, end);
    }
    const surefire = (outer?.surefire ?? false) || /surefire/i.test(a['xsi:noNamespaceSchemaLocation'] ?? '');
    this.suites.push({ names, file, timestamp: timestamp && timestamp.length <= TIMESTAMP_MAX ? timestamp : null, counted, timed, surefire });
  }

  private openInCase(tag: SaxesTagPlain): void {
    const testcase = (this.current as OpenCase).value;
    const a = tag.attributes;
    this.inside.push(tag.name);
    if (tag.name === 'failure' || tag.name === 'error' || RETRY_ELEMENTS.has(tag.name)) {
      if (this.failure) return;
      this.failure = {
        value: { element: tag.name as JunitFailure['element'], type: a.type ?? null, message: a.message ?? null, text: '', time: seconds(a.time) },
        text: new BoundedText(JUNIT_LIMITS.failureText, 'head'),
      };
    } else if (tag.name === 'skipped') {
      testcase.skipped = { message: a.message ?? null };
    } else if (tag.name === 'property' && testcase.properties.length < JUNIT_LIMITS.properties) {
      testcase.properties.push({ name: (a.name ?? '').slice(0, 200), value: (a.value ?? '').slice(0, 2000) });
    }
  }

  private text(text: string): void {
    if (!this.current) return;
    const where = this.inside.at(-1);
    if (this.failure) {
      // Surefire's retries hold their stack in <stackTrace>, their output beside it.
      if (where !== 'system-out' && where !== 'system-err') this.failure.text.add(text);
    } else if (where === 'system-out') this.current.out.add(text);
    else if (where === 'system-err') this.current.err.add(text);
    else if (where === 'skipped') {
      const skipped = this.current.value.skipped;
      if (skipped && !skipped.message) skipped.message = text.trim().slice(0, 2000) || null;
    }
  }

  private close(tag: SaxesTagPlain): void {
    if (!this.current) {
      if (tag.name === 'testsuite') this.suites.pop();
      return;
    }
    if (tag.name === 'testcase' && this.inside.length === 0) return this.closeCase(this.current);
    this.inside.pop();
    if (this.failure && tag.name === this.failure.value.element) {
      const failure = { ...this.failure.value, text: this.failure.text.value() };
      const testcase = this.current.value;
      if (RETRY_ELEMENTS.has(failure.element)) {
        if (testcase.retries.length < JUNIT_LIMITS.retries) testcase.retries.push(failure);
      } else testcase.failure ??= failure;
      this.failure = null;
    }
  }

  private closeCase(open: OpenCase): void {
    this.current = null;
    this.cases++;
    this.caseSeconds += open.value.time ?? 0;
    // The open testcase is handed on as it is (no copy a testcase): nothing here keeps it.
    const testcase = open.value;
    testcase.systemOut = open.out.value();
    testcase.systemErr = open.err.value();
    testcase.attachments = attachmentsIn(testcase.systemOut);
    this.onCase(testcase);
  }
}
