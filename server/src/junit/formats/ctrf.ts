import { JunitFileError, type JunitCase, type JunitFailure } from '../read.ts';
import { JUNIT_LIMITS } from '../schema.ts';
import type { ReaderFactory } from './reader.ts';
import { asArray, asObject, blankCase, failure, instantMs, numberOr, stringOr, tailOf, totals } from './json-common.ts';
import { WholeDocumentReader } from './whole-document.ts';

// CTRF, the Common Test Report Format (ctrf.io): one JSON document, `results` with `tool`,
// `summary` and `tests`, read whole once the file has ended (at most WHOLE_DOCUMENT_MAX_CHARS). A
// test is a testcase: its suites are its `suite` (a list, or one string of titles joined by ` > `),
// its class that suite, else its `filePath`; `duration` in ms; `failed` is a failure (`message`,
// `trace`); `skipped`, `pending` and `other` are skipped (their `rawStatus` the reason). Its earlier
// runs are `retryAttempts` (each with its status, message and trace), else `retries` (a count of
// failed runs before the last, no more said of them); `attachments[].path` are its files; `tags`,
// `labels`, `type`, `browser` its properties.

const SKIPPED = new Set(['skipped', 'pending', 'other']);

class CtrfReader extends WholeDocumentReader {
  protected read(document: Record<string, unknown>): void {
    const results = asObject(document.results);
    if (!results || !Array.isArray(results.tests)) throw new JunitFileError(this.file, 1, 'is not CTRF: it has no `results.tests`');
    const summary = asObject(results.summary);
    if (summary) {
      const skipped = ['skipped', 'pending', 'other'].reduce((sum, key) => sum + (numberOr(summary[key]) ?? 0), 0);
      this.totals = totals(summary.tests, summary.failed, 0, skipped);
      this.times.startMs = instantMs(summary.start);
      this.times.endMs = instantMs(summary.stop);
      const duration = numberOr(summary.duration);
      this.times.seconds =
        duration !== null ? duration / 1000 : this.times.startMs !== null && this.times.endMs !== null ? (this.times.endMs - this.times.startMs) / 1000 : 0;
    }
    for (const each of results.tests) {
      const test = asObject(each);
      if (test) this.test(test);
    }
  }

  private test(test: Record<string, unknown>): void {
    const name = stringOr(test.name) ?? '';
    const suite = test.suite;
    const suites = Array.isArray(suite)
      ? suite.filter((title): title is string => typeof title === 'string' && title !== '')
      : typeof suite === 'string' && suite !== ''
        ? suite.split(' > ')
        : [];
    const file = stringOr(test.filePath);
    const duration = numberOr(test.duration);
    const line = numberOr(test.line);
    const start = instantMs(test.start);
    const testcase: JunitCase = {
      ...blankCase({ atLine: this.document.nextLine(name) }),
      suites,
      file,
      classname: suites.join(' > ') || file || '',
      name: name || '(unnamed test)',
      line: line !== null && line > 0 ? line : null,
      time: duration !== null && duration >= 0 ? duration / 1000 : null,
      timestamp: start !== null ? new Date(start).toISOString() : null,
      systemOut: tailOf(
        asArray(test.stdout)
          .filter((text) => typeof text === 'string')
          .join('\n'),
      ),
      systemErr: tailOf(
        asArray(test.stderr)
          .filter((text) => typeof text === 'string')
          .join('\n'),
      ),
      attachments: asArray(test.attachments)
        .map((attachment) => stringOr(asObject(attachment)?.path))
        .filter((path): path is string => path !== null && path !== '')
        .slice(0, JUNIT_LIMITS.attachmentsPerTest),
      properties: this.properties(test),
    };
    const status = stringOr(test.status);
    const message = stringOr(test.message);
    const trace = stringOr(test.trace) ?? '';
    if (status === 'failed') testcase.failure = failure('failure', null, message, trace || message || '', testcase.time);
    else if (status !== null && SKIPPED.has(status)) testcase.skipped = { message: message ?? stringOr(test.rawStatus) ?? status };
    testcase.retries = this.retries(test, testcase.failure);
    this.hand(testcase);
  }

  /** The failed runs before the last: `retryAttempts`' failed ones, else `retries` of them, of which the file says nothing more. */
  private retries(test: Record<string, unknown>, last: JunitFailure | null): JunitFailure[] {
    const attempts = asArray(test.retryAttempts).map(asObject);
    if (attempts.length > 0) {
      return attempts
        .filter((attempt): attempt is Record<string, unknown> => attempt !== null && attempt.status === 'failed')
        .slice(0, JUNIT_LIMITS.retries)
        .map((attempt) => {
          const duration = numberOr(attempt.duration);
          const message = stringOr(attempt.message);
          return failure('failure', null, message, stringOr(attempt.trace) ?? message ?? '', duration !== null ? duration / 1000 : null);
        });
    }
    const count = numberOr(test.retries) ?? 0;
    if (count <= 0 || !Number.isInteger(count)) return [];
    const unknown = failure('failure', null, last?.message ?? null, last?.text ?? '', null);
    return Array.from({ length: Math.min(count, JUNIT_LIMITS.retries) }, () => ({ ...unknown }));
  }

  private properties(test: Record<string, unknown>): { name: string; value: string }[] {
    const properties: { name: string; value: string }[] = [];
    for (const tag of asArray(test.tags)) if (typeof tag === 'string') properties.push({ name: 'tag', value: tag.slice(0, 2000) });
    for (const key of ['type', 'browser', 'device', 'rawStatus'] as const) {
      const value = stringOr(test[key]);
      if (value) properties.push({ name: key, value: value.slice(0, 2000) });
    }
    if (test.flaky === true) properties.push({ name: 'flaky', value: 'true' });
    // CTRF 1.0's `labels`: values of a few kinds, a list joined.
    for (const [name, value] of Object.entries(asObject(test.labels) ?? {})) {
      const text = Array.isArray(value) ? value.map(String).join(', ') : typeof value === 'object' || value === undefined ? null : String(value);
      if (text !== null) properties.push({ name: `label.${name}`.slice(0, 200), value: text.slice(0, 2000) });
    }
    return properties.slice(0, JUNIT_LIMITS.properties);
  }
}

export const readCtrf: ReaderFactory = (file, onCase) => new CtrfReader(file, onCase, 'CTRF');
