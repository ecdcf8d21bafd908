import type { SaxesTagPlain } from 'saxes';
import { count, type JunitCase, type JunitFailure, seconds } from '../read.ts';
import type { BoundedText } from '../testcase.ts';
import type { ReaderFactory } from './reader.ts';
import { baseName, blankCase, failureText, outputText, withoutClass, XmlResultReader } from './xml.ts';

// xUnit.net's XML (v2's `assemblies/assembly/collection/test`, and v1's `assembly/class/test`,
// which older runners and Fixie still write): each `test` a testcase, its `type` the class, its
// `result` Pass, Fail, Skip or NotRun; `failure` holds `message` and `stack-trace`, a skip its
// `reason`, the test's `output` what it wrote. The assemblies' `total`, `failed`, `skipped` are the
// file's totals (their `errors` count failures outside tests, which are no testcase).

interface OpenTest {
  value: JunitCase;
  result: string;
  /** Element names open inside the test. */
  inside: string[];
  out: BoundedText;
  reason: string;
  failure: { type: string | null; message: BoundedText; stack: BoundedText } | null;
}

class XunitReader extends XmlResultReader {
  private assembly = '';
  private current: OpenTest | null = null;
  private assemblySeconds = 0;
  private testSeconds = 0;

  constructor(file: string, onCase: (testcase: JunitCase) => void) {
    super(file, onCase, { name: 'xUnit.net XML', roots: ['assemblies', 'assembly'] });
  }

  protected open(tag: SaxesTagPlain): void {
    const a = tag.attributes;
    if (this.current) {
      this.current.inside.push(tag.name);
      if (tag.name === 'failure') {
        this.current.failure = { type: a['exception-type'] ?? null, message: failureText(), stack: failureText() };
      } else if (tag.name === 'trait' && this.current.value.properties.length < 50) {
        this.current.value.properties.push({ name: (a.name ?? '').slice(0, 200), value: (a.value ?? '').slice(0, 2000) });
      }
      return;
    }
    if (tag.name === 'assembly') {
      this.assembly = baseName(a.name ?? '');
      if (a.total !== undefined) {
        const sum = (this.totals ??= { tests: 0, failures: 0, errors: 0, skipped: 0 });
        sum.tests += count(a.total);
        sum.failures += count(a.failed);
        sum.skipped += count(a.skipped);
      }
      this.assemblySeconds += seconds(a.time) ?? 0;
    } else if (tag.name === 'test') {
      const classname = (a.type ?? '').trim();
      const name = withoutClass((a.name ?? '').trim(), classname) || a.method || classname || '(unnamed test)';
      this.current = {
        value: blankCase({ suites: this.assembly ? [this.assembly] : [], classname, name, time: seconds(a.time), atLine: this.line }),
        result: a.result ?? '',
        inside: [],
        out: outputText(),
        reason: '',
        failure: null,
      };
    }
  }

  protected text(text: string): void {
    const open = this.current;
    if (!open) return;
    const where = open.inside.at(-1);
    if (open.failure && open.inside.includes('failure')) {
      if (where === 'message') open.failure.message.add(text);
      else if (where === 'stack-trace') open.failure.stack.add(text);
    } else if (where === 'output') open.out.add(text);
    else if (open.inside.includes('reason') && open.reason.length < 2000) open.reason += text;
  }

  protected close(tag: SaxesTagPlain): void {
    const open = this.current;
    if (!open) return;
    if (open.inside.length > 0) {
      open.inside.pop();
      return;
    }
    if (tag.name !== 'test') return;
    this.current = null;
    const testcase = open.value;
    const result = open.result.toLowerCase();
    if (result === 'fail') {
      const failure: JunitFailure = {
        element: 'failure',
        type: open.failure?.type ?? null,
        message: open.failure?.message.value().trim() || null,
        text: open.failure?.stack.value() ?? '',
        time: null,
      };
      testcase.failure = failure;
    } else if (result === 'skip' || result === 'notrun') {
      testcase.skipped = { message: open.reason.trim().slice(0, 2000) || (result === 'notrun' ? 'not run' : null) };
    }
    testcase.systemOut = open.out.value();
    this.testSeconds += testcase.time ?? 0;
    this.emit(testcase);
  }

  protected finish(): void {
    this.times.seconds = this.assemblySeconds > 0 ? this.assemblySeconds : this.testSeconds;
  }
}

export const xunitReader: ReaderFactory = (file, onCase) => new XunitReader(file, onCase);
