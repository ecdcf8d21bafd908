import { JunitFileError, type JunitFailure, type JunitTimes, type JunitTotals } from '../read.ts';
import { JUNIT_LIMITS } from '../schema.ts';

export { blankCase, BoundedText } from '../testcase.ts';

// What the JSON formats' readers share: a testcase's defaults, bounded text, the line splitting of
// the line-delimited formats (`go test -json`, Dart's) and the whole-document reading of the others
// (Mocha's, RSpec's, CTRF).

/**
 * Characters of a whole-document format's file (Mocha JSON, RSpec JSON, CTRF) read at most: such a
 * file is one JSON document, parsed whole once it has ended, so its size is bounded; beyond, a 400.
 * The line-delimited formats are read line by line, whatever their size.
 */
export const WHOLE_DOCUMENT_MAX_CHARS = 64 * 1024 * 1024;

/** Characters of one line of a line-delimited format: one event (a test's output line, at most). */
export const EVENT_LINE_MAX_CHARS = 16 * 1024 * 1024;

export const headOf = (text: string, max: number = JUNIT_LIMITS.failureText): string => text.slice(0, max);
export const tailOf = (text: string, max: number = JUNIT_LIMITS.outputTail): string => text.slice(-max);

export function failure(element: JunitFailure['element'], type: string | null, message: string | null, text: string, time: number | null): JunitFailure {
  return { element, type: type ? type.slice(0, 500) : null, message: message ? message.slice(0, 2000) : null, text: headOf(text), time };
}

/** A number a file states, else null. */
export function numberOr(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function stringOr(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Milliseconds of an ISO timestamp, or of epoch milliseconds; null for neither. */
export function instantMs(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  if (typeof value !== 'string' || value.length > 64) return null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : null;
}

export function emptyTimes(): JunitTimes {
  return { startMs: null, endMs: null, seconds: 0 };
}

/** Widens `times` to hold the instant `ms`. */
export function widen(times: JunitTimes, ms: number | null): void {
  if (ms === null) return;
  times.startMs = Math.min(times.startMs ?? ms, ms);
  times.endMs = Math.max(times.endMs ?? ms, ms);
}

export function totals(tests: unknown, failures: unknown, errors: unknown, skipped: unknown): JunitTotals | null {
  const n = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0);
  if (typeof tests !== 'number') return null;
  return { tests: n(tests), failures: n(failures), errors: n(errors), skipped: n(skipped) };
}

/**
 * Splits a line-delimited file's chunks into lines, each handed on with its number; a line longer
 * than any event is refused, so what is kept is bounded whatever the file.
 */
export class LineSplitter {
  private rest = '';
  /** The number of the line being read. */
  line = 1;

  constructor(
    private readonly file: string,
    private readonly onLine: (text: string, line: number) => void,
  ) {}

  write(chunk: string): void {
    // A byte order mark (Windows' tools write one) is not part of the first line.
    const text = this.line === 1 && this.rest === '' ? (this.rest + chunk).replace(/^\uFEFF/, '') : this.rest + chunk;
    let from = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', from)) {
      this.onLine(text.slice(from, newline).replace(/\r$/, ''), this.line);
      this.line++;
      from = newline + 1;
    }
    this.rest = text.slice(from);
    if (this.rest.length > EVENT_LINE_MAX_CHARS) {
      throw new JunitFileError(
        this.file,
        this.line,
        `has a line longer than ${EVENT_LINE_MAX_CHARS.toLocaleString('en')} characters: one event of the format is far shorter`,
      );
    }
  }

  end(): void {
    if (this.rest.trim() !== '') this.onLine(this.rest.replace(/\r$/, ''), this.line);
    this.rest = '';
  }
}

/** One line's JSON object; a broken line is a 400 naming it. */
export function parseEventLine(file: string, text: string, line: number, format: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new JunitFileError(file, line, `is not ${format}: this line is not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new JunitFileError(file, line, `is not ${format}: this line is not a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * A whole-document format's text, gathered up to WHOLE_DOCUMENT_MAX_CHARS and parsed once the file
 * has ended; a broken document is a 400 naming the line where JSON.parse stopped.
 */
export class WholeDocument {
  private readonly parts: string[] = [];
  private chars = 0;
  /** Newlines seen so far: the line reached. */
  line = 1;
  /** The text, once parsed: for finding where each test's record starts. */
  text = '';
  private lineStarts: number[] = [];

  constructor(
    private readonly file: string,
    private readonly format: string,
  ) {}

  write(chunk: string): void {
    this.chars += chunk.length;
    if (this.chars > WHOLE_DOCUMENT_MAX_CHARS) {
      throw new JunitFileError(
        this.file,
        this.line,
        `is more than ${WHOLE_DOCUMENT_MAX_CHARS / 1024 / 1024} MB of ${this.format}: a ${this.format} file is one JSON document, read whole, up to that size`,
      );
    }
    for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) this.line++;
    this.parts.push(chunk);
  }

  /** The document as a JSON object. */
  parse(): Record<string, unknown> {
    this.text = this.parts.join('').replace(/^\uFEFF/, '');
    this.parts.length = 0;
    if (this.text.trim() === '') throw new JunitFileError(this.file, 1, `is empty: ${this.format} is a JSON document`);
    let value: unknown;
    try {
      value = JSON.parse(this.text);
    } catch (error) {
      const message = (error as Error).message;
      const position = /at position (\d+)/.exec(message)?.[1];
      const line = this.lineAt(position === undefined ? syntaxErrorAt(this.text) : Number(position));
      throw new JunitFileError(this.file, line, `is not ${this.format}: it is not well-formed JSON (${message})`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new JunitFileError(this.file, 1, `is not ${this.format}: its JSON is not an object`);
    return value as Record<string, unknown>;
  }

  /** The line of a character of the text. */
  lineAt(position: number): number {
    if (this.lineStarts.length === 0) {
      this.lineStarts.push(0);
      for (let at = this.text.indexOf('\n'); at !== -1; at = this.text.indexOf('\n', at + 1)) this.lineStarts.push(at + 1);
    }
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] as number) <= position) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  }

  private cursor = 0;

  /**
   * The line where the next test's record is, found by a string it holds (its name, as JSON
   * writes it) from where the last one was: the records come in the file's order.
   */
  nextLine(key: string): number {
    const needle = JSON.stringify(key);
    const at = this.text.indexOf(needle, this.cursor);
    if (at === -1) return this.lineAt(this.cursor);
    this.cursor = at + needle.length;
    return this.lineAt(at);
  }
}

export function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Where JSON text stops being JSON (V8 names the position of some errors only): a scan of its
 * grammar, done only for a document JSON.parse refused.
 */
export function syntaxErrorAt(text: string): number {
  let at = 0;
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++;
  };
  const fail = (): never => {
    throw at;
  };
  const literal = () => {
    const match = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at, at + 400));
    if (!match) fail();
    at += (match as RegExpExecArray)[0].length;
  };
  const string = () => {
    if (text[at] !== '"') fail();
    at++;
    while (at < text.length && text[at] !== '"') {
      if (text[at] === '\\') at++;
      else if ((text.charCodeAt(at) as number) < 0x20) fail();
      at++;
    }
    if (at >= text.length) fail();
    at++;
  };
  // Containers open on a stack (not by recursion: a document may nest deep).
  const stack: ('{' | '[')[] = [];
  const value = (): void => {
    space();
    const c = text[at];
    if (c === '{' || c === '[') {
      stack.push(c);
      at++;
      space();
      if (text[at] === (c === '{' ? '}' : ']')) {
        stack.pop();
        at++;
        return;
      }
      if (c === '{') {
        string();
        space();
        if (text[at] !== ':') fail();
        at++;
      }
      return value();
    }
    if (c === '"') string();
    else literal();
    // After a value: close containers or go on to the next member.
    for (;;) {
      space();
      const open = stack.at(-1);
      if (!open) return;
      if (text[at] === (open === '{' ? '}' : ']')) {
        stack.pop();
        at++;
        continue;
      }
      if (text[at] !== ',') fail();
      at++;
      if (open === '{') {
        space();
        string();
        space();
        if (text[at] !== ':') fail();
        at++;
      }
      return value();
    }
  };
  try {
    value();
    space();
    return at;
  } catch (position) {
    return typeof position === 'number' ? position : at;
  }
}
