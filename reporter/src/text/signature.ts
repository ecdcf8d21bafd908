import { createHash } from 'node:crypto';
import { stripAnsi } from './ansi.ts';

// The server reads failures with the reporter's own stripper: one rule for what a colour code is.
export { stripAnsi };

export interface FailureInput {
  /** The error message as Playwright gives it (colour codes are removed here). */
  message: string;
  /** Where the test source failed: a path relative to the project, and the line. */
  file: string | null;
  line: number | null;
}

// Lines that carry the values of a mismatch: the values vary from run to run, the mode does not.
const VALUE_LINE =
  /^\s*(Expected|Received|Expected string|Received string|Expected pattern|Expected substring|Received value|Expected value|Expected length|Received length|Received array|Expected array|Number of calls|Received object|Expected object|Expected: not|Received: not)\b[^:]*:/;
const DIFF_LINE = /^\s*[-+] /;
// A deep-equality diff: its body (and the values in its context lines) is all values.
const DIFF_HEADER = /^\s*- Expected\b.*-\s*\d+\s*$/;
// A locator or selector names what the test waits for: its quoted text is part of the mode.
const LOCATOR_LINE = /(locator\(|getBy\w+\(|frameLocator\(|^\s*Locator:|selector|waiting for)/i;

function normaliseVolatile(text: string): string {
  return (
    text
      // timestamps before numbers, ids and hashes before plain numbers
      .replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b/g, '<time>')
      // uuids, hashes and numbers are all ids: one placeholder, so an id's form does not split a mode
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<n>')
      .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, '<n>')
      .replace(/(?:\/tmp|\/var\/folders|\/private\/var|[A-Z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp)[^\s'"`)]*/g, '<tmp>')
      .replace(/(https?:\/\/[^\s"'`)?#]+)[?#][^\s"'`)]*/g, '$1')
      .replace(/\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]):\d+/g, '$1:<port>')
      .replace(/\b\d+(?:\.\d+)?\s?(ms|s|sec|seconds|milliseconds|m|min|minutes)\b/g, '<duration>')
      // digits anywhere: ids inside tokens (order-4711, session=1abc1) vary, the mode does not
      .replace(/\d+(?:\.\d+)?/g, '<n>')
  );
}

function normaliseLine(line: string): string | null {
  if (VALUE_LINE.test(line)) return line.replace(/:.*$/, ': <value>');
  if (DIFF_LINE.test(line)) return null;
  const keepQuotes = LOCATOR_LINE.test(line);
  const unquoted = keepQuotes ? line : line.replace(/(["'`])(?:\\.|(?!\1).)*\1/g, '<q>');
  return normaliseVolatile(unquoted).replace(/\s+/g, ' ').trim();
}

/** The error's kind: `TimeoutError`, `Error`, ... from the start of the message. */
export function errorKind(message: string): string {
  const match = /^\s*([A-Z]\w*(?:Error|Exception))\b/.exec(message);
  return match?.[1] ?? 'Error';
}

/**
 * What the failing action waited for, from the call log: a timeout's message names only the action
 * (`locator.click: Timeout 500ms exceeded.`), its log names the locator.
 */
function waitedFor(callLog: string): string | null {
  const line = callLog.split('\n').find((candidate) => /^\s*-\s*waiting for /.test(candidate));
  return line ? normaliseLine(line.replace(/^\s*-\s*/, '')) : null;
}

/** The mode of a failure: its kind, its message without volatile parts, what it waited for, where it failed. */
export function failureMode(input: FailureInput): string {
  const plain = stripAnsi(input.message);
  const [head = plain, callLog = ''] = plain.split(/\n\s*Call log:/);
  const headLines = head.split('\n');
  const diffAt = headLines.findIndex((line) => DIFF_HEADER.test(line));
  const lines = (diffAt >= 0 ? headLines.slice(0, diffAt) : headLines)
    .map(normaliseLine)
    .filter((line): line is string => line !== null && line.length > 0)
    .slice(0, 12);
  const waited = waitedFor(callLog);
  const location = input.file ? `${input.file.replace(/\\/g, '/')}:${input.line ?? 0}` : '';
  return [errorKind(plain), ...lines, ...(waited ? [waited] : []), location].join('\n');
}

/** A failure group id: the same failure mode gets the same id in every run, branch and machine. */
export function failureSignature(input: FailureInput): string {
  return `fg_${createHash('sha256').update(failureMode(input)).digest('hex').slice(0, 20)}`;
}
