import { JunitFileError, type JunitCase } from '../read.ts';
import type { ReaderFactory } from './reader.ts';
import { asArray, asObject, blankCase, failure, numberOr, stringOr, totals } from './json-common.ts';
import { WholeDocumentReader } from './whole-document.ts';

// RSpec's JSON formatter (`rspec --format json`): one JSON document (`version`, `examples`,
// `summary`, `messages`), read whole once the file has ended (at most WHOLE_DOCUMENT_MAX_CHARS).
// An example is a testcase: its class is its example groups (`full_description` less its
// `description`), else its file; `pending` is skipped with its `pending_message`; a failed example's
// `exception` is its failure (`class`, `message`, `backtrace`). Errors outside of examples (a spec
// file that did not load) are one failed testcase, `errors outside of examples`, with RSpec's
// `messages`. RSpec writes no retries, nor when the run started (only its `duration`).

class RspecJsonReader extends WholeDocumentReader {
  protected read(document: Record<string, unknown>): void {
    if (!Array.isArray(document.examples)) throw new JunitFileError(this.file, 1, 'is not RSpec JSON: it has no `examples`');
    const summary = asObject(document.summary);
    const outside = numberOr(summary?.errors_outside_of_examples_count) ?? 0;
    if (summary) this.totals = totals(summary.example_count, summary.failure_count, outside, summary.pending_count);
    this.times.seconds = numberOr(summary?.duration) ?? 0;
    for (const each of document.examples) {
      const example = asObject(each);
      if (example) this.example(example);
    }
    if (outside > 0) {
      const messages = asArray(document.messages).filter((message): message is string => typeof message === 'string');
      const text = messages.join('\n');
      this.hand({
        ...blankCase({ atLine: 1 }),
        name: 'errors outside of examples',
        failure: failure('error', null, `${outside} error(s) occurred outside of examples`, text, null),
      });
    }
  }

  private example(example: Record<string, unknown>): void {
    const description = stringOr(example.description) ?? '';
    const full = stringOr(example.full_description) ?? description;
    const file = (stringOr(example.file_path) ?? '').replace(/^\.\//, '') || null;
    const groups = full.endsWith(description) ? full.slice(0, full.length - description.length).trim() : '';
    const runTime = numberOr(example.run_time);
    const line = numberOr(example.line_number);
    const testcase: JunitCase = {
      ...blankCase({ atLine: this.document.nextLine(stringOr(example.id) ?? full) }),
      suites: file ? [file] : [],
      file,
      classname: groups || file || '',
      name: description || full || '(unnamed example)',
      line: line !== null && line > 0 ? line : null,
      time: runTime !== null && runTime >= 0 ? runTime : null,
    };
    const status = stringOr(example.status);
    if (status === 'failed') {
      const exception = asObject(example.exception);
      const backtrace = asArray(exception?.backtrace).filter((frame): frame is string => typeof frame === 'string');
      const message = stringOr(exception?.message);
      testcase.failure = failure('failure', stringOr(exception?.class), message, [message ?? '', ...backtrace].join('\n'), testcase.time);
    } else if (status === 'pending') testcase.skipped = { message: stringOr(example.pending_message) };
    this.hand(testcase);
  }
}

export const readRspecJson: ReaderFactory = (file, onCase) => new RspecJsonReader(file, onCase, 'RSpec JSON');
