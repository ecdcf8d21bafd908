import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';
import type { JunitUploadAnswer } from '../../server/src/junit/schema.ts';

// Real report files that other projects' runners wrote (test/fixtures/junit-corpus: the test files
// of EnricoMi/publish-unit-test-result-action and mikepenz/action-junit-report, with the counts
// their own tests expect), each uploaded alone through POST /api/test-runs/junit.

const CORPUS = path.join(import.meta.dirname, '../fixtures/junit-corpus');

interface Counts {
  tests: number;
  failures?: number;
  errors?: number;
  skipped: number;
  /** mikepenz's: failures and errors together. */
  failed?: number;
}

interface Expected {
  file: string;
  format: string;
  corrupt: boolean;
  counts: Counts | null;
  expected_by: string;
}

const { files: corpus } = JSON.parse(fs.readFileSync(path.join(CORPUS, 'expectations.json'), 'utf8')) as { files: Expected[] };

/** The rules of docs/ci.md ("How JUnit XML is read") that make Proctor's answer differ from a corpus's, on purpose. */
const RULES = {
  'not-well-formed':
    'A `<` inside an attribute value is not well-formed XML (web-test-runner\'s expected output, `time="<<computed>>"`): refused with a 400 naming its line, where the action\'s lenient parser reads it',
  testcases: "Proctor counts the testcases a file holds (the answer's `differences` says the totals are not theirs); the action takes the testsuite's totals",
  'one-result': 'A testcase is one run with one outcome (its first `failure` or `error`, else `skipped`); the action counts each result element of a testcase',
  disabled:
    'A testcase with `status="disabled"` (Google Test, tst) did not run: it is skipped, as the file\'s `disabled` total says; the action counts it as passed',
  rendering:
    "A testcase with `<skipped>` is skipped; the action's expectation is of the NUnit file it rendered this JUnit XML from, where the test was inconclusive",
  'control-character':
    'A control character XML 1.0 forbids (NUL, SOH, ETX, FF in a test\'s skip reason) is read as U+FFFD (docs/ci.md, "How JUnit XML is read"): the file is accepted, where the action refuses it',
  inconclusive:
    'An NUnit 3 test whose result is Inconclusive gave no verdict: it is skipped (as its JUnit rendering is, rule `rendering`); the action counts it as passed',
  'last-run': "A test's outcome is its last run's (a pass, then a failure, then an error: failed); the action calls a test that passed once flaky",
} as const;

/** Files whose answer differs from their corpus's on purpose, and the rule that decides each. */
const EXCEPTIONS: Record<string, keyof typeof RULES> = {
  'mikepenz/junit-web-test/expected.xml': 'not-well-formed',
  'mikepenz/junit-web-test/expectedRetries.xml': 'not-well-formed',
  'enricomi/junit-xml/no-cases-but-tests.xml': 'testcases',
  'enricomi/junit-xml/no-cases-but-tests.junit-xml': 'testcases',
  'enricomi/xunit/mstest/jenkinsci/testcase2.junit-xml': 'testcases',
  'enricomi/xunit/mstest/jenkinsci/testcase2.xml': 'testcases',
  'enricomi/junit-xml/junit.multiresult.xml': 'one-result',
  'enricomi/junit-xml/junit.multiresult.junit-xml': 'one-result',
  'enricomi/junit-xml/tst/disabled.xml': 'disabled',
  'enricomi/junit-xml/tst/disabled.junit-xml': 'disabled',
  'enricomi/nunit/nunit3/jenkins/NUnit-issue33493.junit-xml': 'rendering',
  'enricomi/nunit/nunit3/jenkins/NUnit-issue33493.xml': 'inconclusive',
  'enricomi/nunit/nunit3/jenkins/NUnit-issue17521.xml': 'control-character',
  'mikepenz/flaky_retries/flaky_success_first.xml': 'last-run',
};

function ruleFor(entry: Expected): keyof typeof RULES | undefined {
  return EXCEPTIONS[entry.file];
}

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  key = project.key;
  await seedEnvironment(server.sql, project.projectId, 'corpus');
});
afterAll(async () => {
  await server?.close();
});

/** A file as the upload's answer tells it. */
type FileAnswer = JunitUploadAnswer['files'][number];

/** Uploads one file; `forced`: with the query's `format` naming the file's format, else detected. */
async function upload(entry: Expected, n: number, forced = false): Promise<{ status: number; file?: FileAnswer; error?: string }> {
  const name = path.basename(entry.file);
  const boundary = 'corpus-boundary-7f3a';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="report"; filename="${name}"\r\ncontent-type: application/xml\r\n\r\n`),
    fs.readFileSync(path.join(CORPUS, entry.file)),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const format = forced ? `&format=${entry.format}` : '';
  const response = await fetch(`${server.url}/api/test-runs/junit?environment=corpus&run_key=corpus-${n}${forced ? '-forced' : ''}${format}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: new Uint8Array(body),
  });
  const answer = (await response.json()) as { data?: { files: FileAnswer[] }; error?: { message: string } };
  return { status: response.status, file: answer.data?.files[0], error: answer.error?.message };
}

/** Proctor's counts in the corpus's terms: the keys its expectation names. */
function asCorpusCounts(file: FileAnswer, want: Counts): Counts {
  if (want.failed !== undefined || want.failures === undefined) {
    return { tests: file.tests, skipped: file.skipped, ...(want.failed === undefined ? {} : { failed: file.failures + file.errors }) };
  }
  return { tests: file.tests, failures: file.failures, errors: file.errors, skipped: file.skipped };
}

describe('the corpus of real report files (JUnit XML, TRX, NUnit, xUnit.net)', () => {
  const answers = new Map<string, Awaited<ReturnType<typeof upload>>>();
  /** The files of the other formats, uploaded again with their format forced. */
  const forcedAnswers = new Map<string, Awaited<ReturnType<typeof upload>>>();

  beforeAll(async () => {
    // A few at a time: one upload a file, so that a refused file refuses itself alone.
    const queue = [
      ...corpus.map((entry, n) => ({ entry, n, forced: false })),
      ...corpus.map((entry, n) => ({ entry, n, forced: true })).filter(({ entry }) => entry.format !== 'junit'),
    ];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          (next.forced ? forcedAnswers : answers).set(next.entry.file, await upload(next.entry, next.n, next.forced));
        }
      }),
    );
  }, 240_000);

  it('when the corpus is counted, then it holds at least 150 report files, each with an expectation from its own repository', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
    for (const entry of corpus) expect(fs.existsSync(path.join(CORPUS, entry.file)), entry.file).toBe(true);
  });

  it('when each file is uploaded, then it is accepted or refused as its corpus says, a corrupt one with a 400 naming its line', () => {
    const report: string[] = [];
    for (const entry of corpus) {
      const answer = answers.get(entry.file);
      const refused = (entry.corrupt && ruleFor(entry) !== 'control-character') || ruleFor(entry) === 'not-well-formed';
      if (refused) {
        if (answer?.status !== 400 || !answer.error?.startsWith(`${path.basename(entry.file)}:`) || !/^[^:]+:\d+: /.test(answer.error)) {
          report.push(`${entry.file}: wanted a 400 naming its line, got ${answer?.status} ${answer?.error ?? ''}`);
        }
      } else if (answer?.status !== 200) report.push(`${entry.file}: wanted 200, got ${answer?.status} ${answer?.error ?? ''}`);
    }
    expect(report).toEqual([]);
  });

  it("when a file is accepted, then its counts are its corpus's, or a documented rule says why not", () => {
    const report: string[] = [];
    for (const entry of corpus) {
      const file = answers.get(entry.file)?.file;
      const rule = ruleFor(entry);
      if (!file || !entry.counts || rule === 'not-well-formed') continue;
      const ours = asCorpusCounts(file, entry.counts);
      const same = JSON.stringify(ours) === JSON.stringify(entry.counts);
      if (!same && !rule) report.push(`${entry.file}: ${JSON.stringify(ours)} where ${entry.expected_by} says ${JSON.stringify(entry.counts)}`);
      if (same && rule) report.push(`${entry.file}: listed as an exception (${rule}) but its counts agree`);
    }
    expect(report).toEqual([]);
    // Every exception names a rule of the table, and every file it names is in the corpus.
    for (const [file, rule] of Object.entries(EXCEPTIONS)) {
      expect(RULES[rule], file).toBeDefined();
      expect(
        corpus.some((entry) => entry.file === file),
        file,
      ).toBe(true);
    }
  });

  it('when a file of another format is uploaded, then its format is detected from its content, and forcing that format reads it the same', () => {
    const report: string[] = [];
    const others = corpus.filter((entry) => entry.format !== 'junit');
    expect(new Set(others.map((entry) => entry.format))).toEqual(new Set(['trx', 'nunit', 'xunit']));
    for (const entry of others) {
      const detected = answers.get(entry.file);
      const forced = forcedAnswers.get(entry.file);
      if (detected?.file && detected.file.format !== entry.format) report.push(`${entry.file}: read as ${detected.file.format}, not ${entry.format}`);
      if (forced?.status !== detected?.status) report.push(`${entry.file}: ${forced?.status} forced, ${detected?.status} detected`);
      else if (JSON.stringify(forced?.file) !== JSON.stringify(detected?.file)) {
        report.push(`${entry.file}: forced ${JSON.stringify(forced?.file)}, detected ${JSON.stringify(detected?.file)}`);
      }
    }
    expect(report).toEqual([]);
  });

  it("when a file's counts differ from the totals it states, then the answer says why, per file", () => {
    const report: string[] = [];
    for (const entry of corpus) {
      const file = answers.get(entry.file)?.file;
      if (!file?.totals) continue;
      const { tests, failures, errors, skipped } = file;
      const same = JSON.stringify({ tests, failures, errors, skipped }) === JSON.stringify(file.totals);
      if (same !== (file.differences.length === 0)) report.push(`${entry.file}: ${JSON.stringify({ ...file, name: undefined })}`);
    }
    expect(report).toEqual([]);
  });
});

// The JSON formats' corpus (test/fixtures/report-corpus: dorny/test-reporter, EnricoMi's, gotestsum's
// and ctrf-io's files, with the counts their own tests expect), uploaded as CI uploads them.
const JSON_CORPUS = path.join(import.meta.dirname, '../fixtures/report-corpus');
const { files: jsonCorpus } = JSON.parse(fs.readFileSync(path.join(JSON_CORPUS, 'expectations.json'), 'utf8')) as {
  files: (Omit<Expected, 'format'> & { format: string | null })[];
};
/** Files whose upload differs from their corpus's counts on purpose (the rules of test/junit/formats-json.test.ts). */
const JSON_EXCEPTIONS: Record<string, string> = {
  'gotestsum/testjson/go-test-json.out': "a package that failed with no test failing is a failed testcase TestMain, which gotestsum's count leaves out",
  'enricomi/mocha/tests.json': "every failed Mocha test is a failure, as Mocha's stats count them; the action calls one an error",
};

describe('the corpus of real JSON report files (go test -json, Mocha, RSpec, Dart, CTRF)', () => {
  const answers = new Map<string, Awaited<ReturnType<typeof upload>>>();
  const forcedAnswers = new Map<string, Awaited<ReturnType<typeof upload>>>();

  beforeAll(async () => {
    const asUpload = (entry: (typeof jsonCorpus)[number]): Expected => ({
      ...entry,
      file: path.relative(CORPUS, path.join(JSON_CORPUS, entry.file)),
      format: entry.format ?? 'junit',
    });
    let n = 10_000;
    for (const entry of jsonCorpus) {
      answers.set(entry.file, await upload(asUpload(entry), n++));
      if (entry.format) forcedAnswers.set(entry.file, await upload(asUpload(entry), n++, true));
    }
  }, 240_000);

  it('when each file is uploaded, then it is detected as its format and read as the reader reads it, its counts those its corpus expects, and forcing its format changes nothing', () => {
    const report: string[] = [];
    for (const entry of jsonCorpus) {
      const answer = answers.get(entry.file);
      if (!entry.format) {
        if (answer?.status !== 400 || !/^[^:]+:\d+: /.test(answer.error ?? ''))
          report.push(`${entry.file}: wanted a 400 naming its line, got ${answer?.status} ${answer?.error}`);
        continue;
      }
      if (answer?.status !== 200 || !answer.file) {
        report.push(`${entry.file}: wanted 200, got ${answer?.status} ${answer?.error ?? ''}`);
        continue;
      }
      if (answer.file.format !== entry.format) report.push(`${entry.file}: read as ${answer.file.format}, not ${entry.format}`);
      const forced = forcedAnswers.get(entry.file);
      if (JSON.stringify(forced?.file) !== JSON.stringify(answer.file)) report.push(`${entry.file}: forced ${JSON.stringify(forced?.file)}`);
      if (!entry.counts) continue;
      const ours = asCorpusCounts(answer.file, entry.counts) as unknown as Record<string, number>;
      const want = entry.counts as unknown as Record<string, number>;
      const same = Object.keys(want).every((count) => ours[count] === want[count]) && Object.keys(ours).length === Object.keys(want).length;
      if (same === Boolean(JSON_EXCEPTIONS[entry.file])) {
        report.push(
          `${entry.file}: ${JSON.stringify(asCorpusCounts(answer.file, entry.counts))}, corpus ${JSON.stringify(entry.counts)}, exception: ${JSON_EXCEPTIONS[entry.file] ?? 'none'}`,
        );
      }
    }
    expect(report).toEqual([]);
    expect(new Set(jsonCorpus.map((entry) => entry.format).filter(Boolean))).toEqual(
      new Set(['go-test-json', 'mocha-json', 'rspec-json', 'dart-json', 'ctrf']),
    );
  });
});
