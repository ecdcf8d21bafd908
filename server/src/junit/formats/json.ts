import { readCtrf } from './ctrf.ts';
import { readDartJson } from './dart-json.ts';
import { readGoTestJson } from './go-test-json.ts';
import { readMochaJson } from './mocha-json.ts';
import type { ReaderFactory, ResultFormat } from './reader.ts';
import { readRspecJson } from './rspec-json.ts';

// The JSON report formats, told apart by their content: the first chunk of a file's text is enough.

/** The readers of the JSON formats, by format. */
export const JSON_READERS: Partial<Record<ResultFormat, ReaderFactory>> = {
  'go-test-json': readGoTestJson,
  'dart-json': readDartJson,
  'mocha-json': readMochaJson,
  'rspec-json': readRspecJson,
  ctrf: readCtrf,
};

/** The first JSON object's opening keys, near the start of the text: what tells a document format. */
const GO_EVENT = /^\s*\{[^\n]*"Action"\s*:\s*"[a-z-]+"[^\n]*"(?:Test|Package)"\s*:|^\s*\{[^\n]*"(?:Test|Package)"\s*:[^\n]*"Action"\s*:/m;
const DART_EVENT = /^\s*\{[^\n]*(?:"type"\s*:\s*"(?:start|testStart|suite|allSuites)"|"protocolVersion"\s*:)/m;

/**
 * The JSON format of a file from the first chunk of its text, or null (not one of them). Line-
 * delimited formats by their first events; Mocha's and RSpec's documents by the key their
 * reporters write first and the lists that follow; CTRF's by `results` with `tool` and `summary`,
 * wherever they are in the chunk (its reporters write other keys before them).
 */
export function detectJsonFormat(head: string): ResultFormat | null {
  const text = head.replace(/^\uFEFF/, '');
  const start = text.trimStart();
  if (!start.startsWith('{')) return null;
  if (GO_EVENT.test(text)) return 'go-test-json';
  if (DART_EVENT.test(text)) return 'dart-json';
  const has = (key: string) => new RegExp(`"${key}"\\s*:`).test(text);
  // Each document format's reporter writes one key first: Mocha's `stats`, RSpec's `version`.
  const first = /^\{\s*"([^"]{1,40})"\s*:/.exec(start)?.[1];
  if (first === 'stats' && /"(?:tests|passes|failures)"\s*:\s*\[/.test(text)) return 'mocha-json';
  if (first === 'version' && (has('examples') || has('summary_line') || has('summary'))) return 'rspec-json';
  if (has('results') && has('tool') && (has('summary') || has('tests'))) return 'ctrf';
  return null;
}
