import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { allowedXmlText, type JunitCase, JunitFileError, parseStep, type JunitTimes, type JunitTotals, zonedMs } from '../read.ts';
import { BoundedText } from '../testcase.ts';

export { blankCase } from '../testcase.ts';
import { JUNIT_LIMITS } from '../schema.ts';
import type { ResultFileReader } from './reader.ts';

// What the XML formats other than JUnit (TRX, NUnit, xUnit.net) share: a streaming `saxes` parser
// whose events a format's reader turns into testcases, handed on one at a time; broken XML and a
// root of another format are a 400 naming the file and the line, as for JUnit.

export abstract class XmlResultReader implements ResultFileReader {
  private parser: SaxesParser;
  private sawRoot = false;
  cases = 0;
  totals: JunitTotals | null = null;
  readonly times: JunitTimes = { startMs: null, endMs: null, seconds: 0 };

  constructor(
    protected readonly file: string,
    private readonly onCase: (testcase: JunitCase) => void,
    /** How errors name the format, and the root elements it has. */
    private readonly format: { name: string; roots: readonly string[] },
  ) {
    this.parser = this.newParser();
  }

  private newParser(): SaxesParser {
    const parser = new SaxesParser({ position: true });
    parser.on('opentag', (tag) => {
      const plain = tag as SaxesTagPlain;
      if (!this.sawRoot) {
        if (!this.format.roots.includes(plain.name)) {
          const roots = this.format.roots.map((root) => `<${root}>`).join(' or ');
          this.fail(`is not ${this.format.name}: its root element is <${plain.name}>, where ${this.format.name} has ${roots}`);
        }
        this.sawRoot = true;
      }
      this.open(plain);
    });
    parser.on('closetag', (tag) => this.close(tag as SaxesTagPlain));
    parser.on('text', (text) => this.text(text));
    parser.on('cdata', (text) => this.text(text));
    return parser;
  }

  get line(): number {
    return this.parser.line;
  }

  write(chunk: string): void {
    const text = allowedXmlText(chunk);
    this.guard(() => this.parser.write(text));
  }

  end(): void {
    if (!this.sawRoot) this.fail(`holds no element: ${this.format.name} has a ${this.format.roots.map((root) => `<${root}>`).join(' or ')} element`);
    this.guard(() => this.parser.close());
    this.finish();
  }

  /** The file once more from its start (see `ResultFileReader.again`): a new parser, nothing read yet. */
  protected restart(): void {
    this.parser = this.newParser();
    this.sawRoot = false;
  }

  private guard(step: () => void): void {
    parseStep(this.file, this.parser, step);
  }

  protected fail(problem: string): never {
    throw new JunitFileError(this.file, this.parser.line, problem);
  }

  protected emit(testcase: JunitCase): void {
    this.cases++;
    this.onCase(testcase);
  }

  protected abstract open(tag: SaxesTagPlain): void;
  protected abstract close(tag: SaxesTagPlain): void;
  protected abstract text(text: string): void;
  /** The file has ended: totals and times are complete. */
  protected abstract finish(): void;

  /** A run's span from its start and end (zoned timestamps); none from timestamps without a zone. */
  protected span(start: string | undefined, end: string | undefined): void {
    const from = zonedMs(start ?? null);
    const to = zonedMs(end ?? null);
    if (from !== null) this.times.startMs = Math.min(this.times.startMs ?? from, from);
    if (to !== null) this.times.endMs = Math.max(this.times.endMs ?? to, to);
  }
}

/** Text of an element kept while it is read: an error's head, an output's tail. */
export const failureText = () => new BoundedText(JUNIT_LIMITS.failureText, 'head');
export const outputText = () => new BoundedText(JUNIT_LIMITS.outputTail, 'tail');

/** The file name at the end of a path, Windows' or not: an assembly names its tests' suite so, the same on every machine. */
export function baseName(path: string): string {
  return path.split(/[\\/]/).at(-1) ?? path;
}

/** `name` without its class's prefix (`Ns.Class.Method` → `Method`), as the other formats name a test. */
export function withoutClass(name: string, classname: string): string {
  return classname && name.startsWith(`${classname}.`) && name.length > classname.length + 1 ? name.slice(classname.length + 1) : name;
}

/** A string that keeps no slice of the chunk it was cut from (a kept slice keeps its whole chunk alive). */
export function copied(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
