import { JunitReader } from '../read.ts';
import { detectJsonFormat, JSON_READERS } from './json.ts';
import { nunitReader } from './nunit.ts';
import { RESULT_FORMATS, type ReaderFactory, type ResultFormat } from './reader.ts';
import { trxReader } from './trx.ts';
import { xunitReader } from './xunit.ts';

export { RESULT_FORMATS, type ReaderFactory, type ResultFileReader, type ResultFormat } from './reader.ts';

// Which format a file is in, from its content (its first chunk): XML by its root element, JSON
// by what `detectJsonFormat` recognises. A file's name decides nothing: runners name their
// reports freely (`TestResult.xml` is NUnit's, and JUnit's too).

/** The XML root elements each XML format has. */
const XML_ROOTS: Record<string, ResultFormat> = {
  testsuites: 'junit',
  testsuite: 'junit',
  TestRun: 'trx',
  'test-run': 'nunit',
  // NUnit 2's whole run, and NUnit 3's result of one assembly.
  'test-results': 'nunit',
  'test-suite': 'nunit',
  assemblies: 'xunit',
  // xUnit.net v1's.
  assembly: 'xunit',
};

/** The first element's name, past the XML declaration, comments, a DOCTYPE and processing instructions; null if the head holds none. */
function rootElement(head: string): string | null {
  const prolog = /^(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>)*<([A-Za-z_][\w.:-]*)/;
  const match = prolog.exec(head.replace(/^\uFEFF/, ''));
  if (!match) return null;
  const name = match[1] as string;
  // A namespace's prefix (`<ns:TestRun>`) names the same element.
  return name.includes(':') ? (name.split(':').at(-1) as string) : name;
}

/** The format of a file from its first chunk of text; null when it is none Proctor reads. */
export function detectFormat(_file: string, head: string): ResultFormat | null {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('<')) {
    const root = rootElement(text);
    return root !== null && Object.hasOwn(XML_ROOTS, root) ? (XML_ROOTS[root] as ResultFormat) : null;
  }
  return detectJsonFormat(text);
}

const XML_READERS: Partial<Record<ResultFormat, ReaderFactory>> = {
  junit: (file, onCase) => new JunitReader(file, onCase),
  trx: trxReader,
  nunit: nunitReader,
  xunit: xunitReader,
};

/** The reader of a format. */
export function readerFor(format: ResultFormat): ReaderFactory {
  const factory = XML_READERS[format] ?? JSON_READERS[format];
  if (!factory) throw new Error(`no reader for the ${format} format`);
  return factory;
}

/** The formats as a sentence names them, for errors and usage. */
export const FORMAT_NAMES: Record<ResultFormat, string> = {
  junit: 'JUnit XML',
  trx: 'TRX',
  nunit: 'NUnit XML',
  xunit: 'xUnit.net XML',
  'go-test-json': '`go test -json`',
  'mocha-json': "Mocha's JSON",
  'rspec-json': "RSpec's JSON",
  'dart-json': 'Dart/Flutter JSON',
  ctrf: 'CTRF',
};

export const READ_FORMATS = RESULT_FORMATS.map((format) => `${FORMAT_NAMES[format]} (${format})`).join(', ');
