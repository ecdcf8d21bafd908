import type { JunitCase, JunitTimes, JunitTotals } from '../read.ts';
import type { ResultFileReader } from './reader.ts';
import { emptyTimes, WholeDocument } from './json-common.ts';

/**
 * A reader of a whole-document format (Mocha JSON, RSpec JSON, CTRF): the text is gathered (up to
 * WHOLE_DOCUMENT_MAX_CHARS, beyond which the file is refused with a 400 naming the cap) and read
 * once the file has ended, by `read`.
 */
export abstract class WholeDocumentReader implements ResultFileReader {
  protected readonly document: WholeDocument;
  cases = 0;
  totals: JunitTotals | null = null;
  readonly times: JunitTimes = emptyTimes();

  constructor(
    protected readonly file: string,
    private readonly onCase: (testcase: JunitCase) => void,
    format: string,
  ) {
    this.document = new WholeDocument(file, format);
  }

  get line(): number {
    return this.document.line;
  }

  write(chunk: string): void {
    this.document.write(chunk);
  }

  end(): void {
    this.read(this.document.parse());
    this.document.text = '';
  }

  protected abstract read(document: Record<string, unknown>): void;

  protected hand(testcase: JunitCase): void {
    this.cases++;
    this.onCase(testcase);
  }
}
