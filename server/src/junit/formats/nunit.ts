import type { SaxesTagPlain } from 'saxes';
import { count, type JunitCase, seconds, TIMESTAMP_MAX } from '../read.ts';
import type { BoundedText } from '../testcase.ts';
import { JUNIT_LIMITS } from '../schema.ts';
import type { ReaderFactory } from './reader.ts';
import { baseName, blankCase, failureText, outputText, XmlResultReader } from './xml.ts';

// NUnit's XML: NUnit 3's `test-run` (or one assembly's `test-suite`) of nested `test-suite`s and
// their `test-case`s, with `result` Passed, Failed, Skipped, Inconclusive or Warning and a
// `label` (Error, Ignored, Explicit…); and NUnit 2's `test-results`, whose `result` is Success,
// Failure, Error, Ignored, NotRunnable, Inconclusive… and whose `name` is the test's full name.
// A failure holds `message` and `stack-trace`, a skip `reason/message`; NUnit 3 adds `output`
// and `attachments/attachment/filePath` (xUnit.net v3's NUnit report: `attachment filePath="…"`).
// The root's counts are the file's totals.

/** NUnit 2's results that mean the test did not run (or gave no verdict): skipped. */
const NOT_RUN_2 = new Set(['ignored', 'skipped', 'notrunnable', 'inconclusive', 'cancelled', 'notrun']);

interface OpenCase {
  value: JunitCase;
  result: string;
  label: string;
  /** It holds a `failure`. */
  failed: boolean;
  inside: string[];
  out: BoundedText;
  reason: string;
  message: BoundedText;
  stack: BoundedText;
}

/** A full name's class and test: `Ns.Class.Method("a.b")` → `Ns.Class`, `Method("a.b")` (dots in the arguments are not the class's). */
function splitFullName(full: string): { classname: string; name: string } {
  const paren = full.indexOf('(');
  const head = paren === -1 ? full : full.slice(0, paren);
  const dot = head.lastIndexOf('.');
  return dot > 0 ? { classname: full.slice(0, dot), name: full.slice(dot + 1) } : { classname: '', name: full };
}

function zoned(at: string | undefined): string | null {
  // NUnit 3 writes `2018-03-14 20:10:19Z`: the same instant as ISO's `T`.
  return at && at.length <= TIMESTAMP_MAX ? at.replace(' ', 'T') : null;
}

class NunitReader extends XmlResultReader {
  /** The assembly (its file name) of each open test-suite: the tests' suite, the same on every machine. */
  private readonly assemblies: string[] = [];
  private current: OpenCase | null = null;
  private nunit2 = false;
  private rootSeen = false;
  private caseSeconds = 0;
  private rootSeconds: number | null = null;

  constructor(file: string, onCase: (testcase: JunitCase) => void) {
    super(file, onCase, { name: 'NUnit XML', roots: ['test-run', 'test-results', 'test-suite'] });
  }

  private root(tag: SaxesTagPlain): void {
    const a = tag.attributes;
    this.rootSeen = true;
    this.nunit2 = tag.name === 'test-results' || (tag.name === 'test-suite' && a.executed !== undefined);
    if (this.nunit2 && a.total !== undefined) {
      const notRun = count(a['not-run']);
      this.totals = { tests: count(a.total) + notRun, failures: count(a.failures), errors: count(a.errors), skipped: notRun + count(a.inconclusive) };
    } else if (!this.nunit2 && a.total !== undefined) {
      this.totals = { tests: count(a.total), failures: count(a.failed), errors: 0, skipped: count(a.skipped) + count(a.inconclusive) };
    }
    this.rootSeconds = seconds(a.duration ?? a.time);
    this.span(zoned(a['start-time']) ?? undefined, zoned(a['end-time']) ?? undefined);
  }

  protected open(tag: SaxesTagPlain): void {
    const a = tag.attributes;
    if (!this.rootSeen) this.root(tag);
    if (this.current) {
      this.current.inside.push(tag.name);
      if (tag.name === 'failure') this.current.failed = true;
      if (tag.name === 'filePath' && this.current.inside.includes('attachment')) this.current.inside.push('#filePath');
      else if (tag.name === 'attachment' && a.filePath) {
        // xUnit.net v3's NUnit report names the file as the attachment's attribute.
        if (this.current.value.attachments.length < JUNIT_LIMITS.attachmentsPerTest) this.current.value.attachments.push(a.filePath.trim());
      } else if (tag.name === 'property' && this.current.value.properties.length < JUNIT_LIMITS.properties) {
        this.current.value.properties.push({ name: (a.name ?? '').slice(0, 200), value: (a.value ?? '').slice(0, 2000) });
      }
      return;
    }
    if (tag.name === 'test-suite') {
      const outer = this.assemblies.at(-1) ?? '';
      const name = a.name ?? '';
      const assembly = a.type === 'Assembly' || (!outer && /\.(dll|exe)$/i.test(name)) ? baseName(name) : outer;
      this.assemblies.push(assembly);
    } else if (tag.name === 'test-case') this.openCase(a);
  }

  private openCase(a: Record<string, string>): void {
    const split = splitFullName(a.fullname ?? a.name ?? '');
    const classname = (this.nunit2 ? split.classname : (a.classname ?? split.classname)).trim();
    const name = (this.nunit2 ? split.name : (a.name ?? split.name)).trim() || '(unnamed test-case)';
    const assembly = this.assemblies.at(-1);
    const startTime = zoned(a['start-time']);
    this.current = {
      value: blankCase({
        suites: assembly ? [assembly] : [],
        classname,
        name,
        time: seconds(a.duration ?? a.time),
        timestamp: startTime,
        atLine: this.line,
      }),
      result: (a.result ?? '').toLowerCase(),
      label: a.label ?? '',
      failed: false,
      inside: [],
      out: outputText(),
      reason: '',
      message: failureText(),
      stack: failureText(),
    };
    if (this.nunit2) {
      // NUnit 2 marks a test it did not run so, whatever its result says; NUnit 2.2 writes no result, but `success`.
      if (a.executed?.toLowerCase() === 'false' && !NOT_RUN_2.has(this.current.result)) this.current.result = 'notrun';
      else if (!this.current.result && a.success?.toLowerCase() === 'false') this.current.result = 'failure';
    }
  }

  protected text(text: string): void {
    const open = this.current;
    if (!open) return;
    const where = open.inside.at(-1);
    const under = (element: string) => open.inside.includes(element);
    if (where === '#filePath') {
      if (open.value.attachments.length < JUNIT_LIMITS.attachmentsPerTest) open.value.attachments.push(text.trim());
    } else if (under('assertions')) return;
    else if (under('failure')) {
      if (where === 'message') open.message.add(text);
      else if (where === 'stack-trace') open.stack.add(text);
    } else if (under('reason')) {
      if (open.reason.length < 2000) open.reason += text;
    } else if (where === 'output') open.out.add(text);
  }

  protected close(tag: SaxesTagPlain): void {
    const open = this.current;
    if (!open) {
      if (tag.name === 'test-suite') this.assemblies.pop();
      return;
    }
    if (open.inside.length > 0) {
      if (open.inside.at(-1) === '#filePath') open.inside.pop();
      open.inside.pop();
      return;
    }
    this.current = null;
    const testcase = open.value;
    const message = open.message.value().trim() || null;
    // A result NUnit 2.2 did not write: its failure, if it holds one, says it failed.
    const result = open.result || (this.nunit2 && open.failed ? 'failure' : 'success');
    if (result === 'failed' || result === 'failure' || result === 'error') {
      const error = result === 'error';
      // NUnit 3's label says what failed: an exception (Error), a test that could not run (Invalid), a cancelled run.
      testcase.failure = { element: error ? 'error' : 'failure', type: open.label || (error ? 'Error' : null), message, text: open.stack.value(), time: null };
    } else if (result === 'skipped' || result === 'inconclusive' || (this.nunit2 && NOT_RUN_2.has(result))) {
      const reason = open.reason.trim() || message;
      testcase.skipped = { message: reason?.slice(0, 2000) || open.label.toLowerCase() || result };
    }
    testcase.systemOut = open.out.value();
    this.caseSeconds += testcase.time ?? 0;
    this.emit(testcase);
  }

  protected finish(): void {
    this.times.seconds = this.rootSeconds ?? this.caseSeconds;
  }
}

export const nunitReader: ReaderFactory = (file, onCase) => new NunitReader(file, onCase);
