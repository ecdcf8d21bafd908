// A testcase as every format's reader hands it on (JUnit XML's shape, which the other formats are
// read into), and what a file says of itself. Apart from the readers, so that the shape they share
// (formats/reader.ts) and the readers import it without importing each other.

/** A failed attempt as a testcase records it. */
export interface JunitFailure {
  element: 'failure' | 'error' | 'rerunFailure' | 'rerunError' | 'flakyFailure' | 'flakyError';
  type: string | null;
  message: string | null;
  /** The element's text, or its `stackTrace` child's (Surefire's retries): usually the stack. */
  text: string;
  /** Seconds, where the element says (Surefire's retries). */
  time: number | null;
}

export interface JunitCase {
  /** The names of the testsuites around the testcase, outermost first. */
  suites: string[];
  /** `file` of the testcase, else of its testsuite (Vitest, pytest's xunit1, Node's runner). */
  file: string | null;
  classname: string;
  name: string;
  line: number | null;
  time: number | null;
  /** The testsuite's `timestamp`. */
  timestamp: string | null;
  skipped: { message: string | null } | null;
  /** The failure or error of the testcase's own run. */
  failure: JunitFailure | null;
  /** Its other runs, in the file's order: reruns that failed again, or failures before a pass. */
  retries: JunitFailure[];
  properties: { name: string; value: string }[];
  systemOut: string;
  systemErr: string;
  /** Files its output names as `[[ATTACHMENT|path]]` (Jenkins' convention, which Playwright's reporter writes), as written. */
  attachments: string[];
  /** Where the testcase starts in its file: for error messages. */
  atLine: number;
  /** Maven Surefire wrote its testsuite (its schema, or its `surefire.*` properties): it writes a test's reruns inside one testcase. */
  surefire: boolean;
}

/** What a file's testsuites say of themselves: their totals (where they state `tests`), summed over the outermost that do. */
export interface JunitTotals {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

/** When a file's tests ran, as its testsuites say: the zoned timestamps' span, and the seconds they took. */
export interface JunitTimes {
  /** Milliseconds since the epoch: the earliest zoned `timestamp` of a testsuite, and the latest end (`timestamp` + `time`). */
  startMs: number | null;
  endMs: number | null;
  /** Seconds: the outermost testsuites' `time` together, else the testcases'. */
  seconds: number;
}

/** A testcase with JUnit's fields, the ones a reader has not filled empty: every format's reader starts from it. */
export function blankCase(fields: Pick<JunitCase, 'atLine'> & Partial<JunitCase>): JunitCase {
  return {
    suites: [],
    file: null,
    classname: '',
    name: '',
    line: null,
    time: null,
    timestamp: null,
    skipped: null,
    failure: null,
    retries: [],
    properties: [],
    systemOut: '',
    systemErr: '',
    attachments: [],
    surefire: false,
    ...fields,
  };
}

/** Text kept up to a bound: the head of an error (its message and first frames), the tail of output. */
export class BoundedText {
  private text = '';
  constructor(
    private readonly max: number,
    private readonly keep: 'head' | 'tail',
  ) {}
  add(more: string): void {
    if (this.keep === 'head') {
      if (this.text.length < this.max) this.text += more.slice(0, this.max - this.text.length);
      return;
    }
    this.text += more;
    if (this.text.length > this.max * 2) this.text = this.text.slice(-this.max);
  }
  get length(): number {
    return Math.min(this.text.length, this.max);
  }
  value(): string {
    return this.keep === 'tail' ? this.text.slice(-this.max) : this.text;
  }
}
