import { JunitFileError, type JunitCase } from '../read.ts';
import type { ReaderFactory } from './reader.ts';
import { asArray, asObject, blankCase, failure, instantMs, numberOr, stringOr, totals } from './json-common.ts';
import { WholeDocumentReader } from './whole-document.ts';

// Mocha's `json` reporter: one JSON document (`stats`, and `tests`, `passes`, `pending`,
// `failures`, each test `title`, `fullTitle`, `file`, `duration` in ms, `err`), read whole once the
// file has ended (at most WHOLE_DOCUMENT_MAX_CHARS). A test is a testcase; its class is the titles
// of the suites around it (`fullTitle` less its `title`), else its file. Every failed test is a
// `failure`, as Mocha's `stats.failures` counts them. A hook's failure (`"before all" hook…`) is
// listed in `failures` only: it is a failed testcase of its own, as Mocha counts it. Mocha writes no
// earlier attempts of a retried test (only `currentRetry`, kept as a property).

class MochaJsonReader extends WholeDocumentReader {
  protected read(document: Record<string, unknown>): void {
    const stats = asObject(document.stats);
    if (!stats || !Array.isArray(document.tests)) throw new JunitFileError(this.file, 1, 'is not Mocha JSON: it has no `stats` and `tests`');
    this.totals = totals(stats.tests, stats.failures, 0, stats.pending);
    const start = instantMs(stats.start);
    const end = instantMs(stats.end);
    this.times.startMs = start;
    this.times.endMs = end ?? (start !== null && numberOr(stats.duration) !== null ? start + (numberOr(stats.duration) as number) : null);
    this.times.seconds = (numberOr(stats.duration) ?? 0) / 1000;
    const keyOf = (test: Record<string, unknown>) => `${stringOr(test.file) ?? ''}\u0000${stringOr(test.fullTitle) ?? ''}`;
    const pending = new Set(asArray(document.pending).map((test) => keyOf(asObject(test) ?? {})));
    const listed = new Set<string>();
    for (const each of document.tests) {
      const test = asObject(each);
      if (!test) continue;
      listed.add(keyOf(test));
      this.test(test, pending.has(keyOf(test)), typeof stats.start === 'string' ? stats.start : null);
    }
    for (const each of asArray(document.failures)) {
      const test = asObject(each);
      if (test && !listed.has(keyOf(test))) this.test(test, false, typeof stats.start === 'string' ? stats.start : null);
    }
  }

  private test(test: Record<string, unknown>, pending: boolean, timestamp: string | null): void {
    const title = stringOr(test.title) ?? '';
    const fullTitle = stringOr(test.fullTitle) ?? title;
    const file = stringOr(test.file);
    const parents = fullTitle.endsWith(title) ? fullTitle.slice(0, fullTitle.length - title.length).trim() : '';
    const duration = numberOr(test.duration);
    const testcase: JunitCase = {
      ...blankCase({ atLine: this.document.nextLine(fullTitle) }),
      suites: parents ? [parents] : [],
      file,
      classname: parents || file || '',
      name: title || fullTitle || '(unnamed test)',
      time: duration !== null && duration >= 0 ? duration / 1000 : null,
      timestamp,
    };
    const retry = numberOr(test.currentRetry);
    if (retry) testcase.properties = [{ name: 'currentRetry', value: String(retry) }];
    const err = asObject(test.err);
    if (err && Object.keys(err).length > 0) {
      const message = stringOr(err.message);
      const stack = stringOr(err.stack) ?? message ?? '';
      testcase.failure = failure('failure', stringOr(err.name) ?? stringOr(err.code), message, stack, testcase.time);
    } else if (pending || test.pending === true) testcase.skipped = { message: null };
    this.hand(testcase);
  }
}

export const readMochaJson: ReaderFactory = (file, onCase) => new MochaJsonReader(file, onCase, 'Mocha JSON');
