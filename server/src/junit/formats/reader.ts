import type { JunitCase, JunitTimes, JunitTotals } from '../testcase.ts';

// Every report format Proctor reads (JUnit XML and the others: TRX, NUnit 3, xUnit.net v2,
// `go test -json`, Mocha JSON, RSpec JSON, Dart/Flutter JSON, CTRF) is read by a reader of this
// shape into the same testcases as JUnit's (`JunitCase`): the upload then groups, counts, stores
// and attaches them the same way whatever wrote them. A reader is fed a file's text in chunks
// and hands on each testcase as soon as it is complete.

/** The formats, as `--format` and the upload's `format` name them. */
export const RESULT_FORMATS = ['junit', 'trx', 'nunit', 'xunit', 'go-test-json', 'mocha-json', 'rspec-json', 'dart-json', 'ctrf'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

export interface ResultFileReader {
  /** The next chunk of the file's text, in order. Throws `JunitFileError` (file, line, problem) for what cannot be read. */
  write(chunk: string): void;
  /** The file has ended: the last testcases are handed on; throws `JunitFileError` when the file is cut or holds no report. */
  end(): void;
  /** The line the reader has reached (for errors). */
  readonly line: number;
  /** Testcases handed on so far. */
  readonly cases: number;
  /**
   * After `end()`: true when the reader needs the file once more from its start, as a new stream
   * of chunks followed by `end()` (TRX files that list their results before the definitions that
   * name their classes). Readers that read in one pass have none.
   */
  again?(): boolean;
  /** What the file says of itself (its totals), where it does; null where it does not. Known after `end()`. */
  readonly totals: JunitTotals | null;
  /** When the file's tests ran. Known after `end()`. */
  readonly times: JunitTimes;
}

/** Makes a reader for one file: `file` is its name (for errors), `onCase` takes each testcase. */
export type ReaderFactory = (file: string, onCase: (testcase: JunitCase) => void) => ResultFileReader;
