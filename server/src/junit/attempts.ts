import { createHash } from 'node:crypto';
import { failureSignature } from '@proctor/reporter/signature';
import { WIRE_LIMITS as LIMIT } from '@proctor/reporter/wire';
import { type Attempt, isStorableStartedAt } from '../runs/index.ts';
import type { ListedTest } from '../testcases/index.ts';
import type { JunitCase, JunitFailure } from './read.ts';

// A JUnit testcase (or the testcases of one test written one after the other, as runners that
// repeat a failed test write them) as the attempts the reporter would have sent: one test, its
// runs in order, the last carrying the final outcome. Pure: the same file gives the same rows.

const hex20 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 20);

/** Where a test lives, as runners name it: its file, else its class. */
function placeOf(testcase: JunitCase): string {
  return testcase.file ?? testcase.classname;
}

/**
 * A test's id from its file, class, suites and name: the same in every upload of every build, as
 * a Playwright test's id is. Shaped as the reporter's ids are (20 hex, "-", 20 hex). `places`
 * keeps the first half by file or class, which many tests share.
 */
export function junitTestId(testcase: JunitCase, places?: Map<string, string>): string {
  const place = placeOf(testcase);
  let placeId = places?.get(place);
  if (placeId === undefined) {
    placeId = hex20(`junit\u0000${place}`);
    places?.set(place, placeId);
  }
  const test = [testcase.file ?? '', testcase.classname, ...testcase.suites, testcase.name].join('\u0000');
  return `${placeId}-${hex20(test)}`;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The test as a shard's list names it; `id` is its `junitTestId`. */
export function listedTest(testcase: JunitCase, id: string = junitTestId(testcase)): ListedTest {
  const place = placeOf(testcase);
  // The first distinct names but the place's, in order: linear in the nesting, and done once a test has its fill.
  const suites: string[] = [];
  const seen = new Set<string>();
  for (const name of [...testcase.suites, testcase.classname]) {
    if (suites.length >= LIMIT.suitesPerTest) break;
    if (!name || name === place || seen.has(name)) continue;
    seen.add(name);
    suites.push(name);
  }
  return {
    id,
    title: cut(testcase.name, LIMIT.title),
    file_path: cut(place, LIMIT.title),
    suites: suites.map((name) => cut(name, LIMIT.title)),
    runner_project: '',
    tags: [],
    line: testcase.line,
    column: null,
  };
}

type RunStatus = 'passed' | 'failed' | 'timedOut' | 'skipped';

interface OneRun {
  status: RunStatus;
  ms: number;
  failure: JunitFailure | null;
  skipReason: string | null;
  output: boolean;
}

const ms = (secondsTaken: number | null) => Math.min(Math.max(0, Math.round((secondsTaken ?? 0) * 1000)), 2_147_483_647);

function failedStatus(failure: JunitFailure): RunStatus {
  return /timeout|timed out/i.test(`${failure.type ?? ''} ${failure.message ?? ''}`) ? 'timedOut' : 'failed';
}

/** Why a test was skipped: `<skipped message>`, else a `skip` or `fixme` property (Playwright writes its annotations so). */
function skipReason(testcase: JunitCase): string | null {
  const annotation = testcase.properties.find((property) => (property.name === 'skip' || property.name === 'fixme') && property.value);
  return testcase.skipped?.message || annotation?.value || null;
}

/**
 * A testcase's runs, in order: its own run and the retries it records. Surefire's (and
 * Playwright's) `rerunFailure`s follow a first failure; `flakyFailure`s precede the pass.
 */
function runsOf(testcase: JunitCase): OneRun[] {
  const retry = (failure: JunitFailure): OneRun => ({ status: failedStatus(failure), ms: ms(failure.time), failure, skipReason: null, output: false });
  if (testcase.failure) {
    return [
      { status: failedStatus(testcase.failure), ms: ms(testcase.time), failure: testcase.failure, skipReason: null, output: true },
      ...testcase.retries.map(retry),
    ];
  }
  if (testcase.skipped) return [{ status: 'skipped', ms: ms(testcase.time), failure: null, skipReason: skipReason(testcase), output: true }];
  return [...testcase.retries.map(retry), { status: 'passed', ms: ms(testcase.time), failure: null, skipReason: null, output: true }];
}

function outcomeOf(runs: OneRun[]): 'expected' | 'unexpected' | 'flaky' | 'skipped' {
  const ran = runs.filter((run) => run.status !== 'skipped');
  const last = ran.at(-1);
  if (!last) return 'skipped';
  if (last.status !== 'passed') return 'unexpected';
  return ran.some((run) => run.status !== 'passed') ? 'flaky' : 'expected';
}

/** The error as Proctor shows it: `Type: message`, then the text (the stack) when it says more. */
export function errorText(failure: JunitFailure): string {
  const message = failure.message?.trim() ?? '';
  const type = failure.type?.trim() ?? '';
  const head = type && message && !message.startsWith(type) && !/^(failure|error)$/i.test(type) ? `${type}: ${message}` : message || type;
  const text = failure.text.trim();
  const body = text && !head.includes(text) ? (head && text.startsWith(head) ? text : [head, text].filter(Boolean).join('\n\n')) : head;
  return cut(body || failure.element, LIMIT.errorMessage);
}

/** The first frames of a stack: JavaScript's and the JVM's `at …`, Python's `file.py:12: in test`. */
function stackFrames(text: string): string[] | null {
  const frames = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^at\s\S/.test(line) || /^\S+\.py:\d+: in \S/.test(line))
    .slice(0, LIMIT.stackFrames)
    .map((line) => cut(line.replace(/^at\s+/, ''), LIMIT.stackFrame));
  return frames.length > 0 ? frames : null;
}

function startedAt(testcase: JunitCase): string | null {
  const at = testcase.timestamp ? Date.parse(testcase.timestamp) : Number.NaN;
  // A timestamp without a zone is the runner's local time, unknown here: none rather than a wrong one;
  // and none for one the database cannot store (the year 0, past 9999), which would fail the upload.
  if (!Number.isFinite(at) || !/(Z|[+-]\d{2}:?\d{2})$/.test(testcase.timestamp as string)) return null;
  const utc = new Date(at).toISOString();
  return isStorableStartedAt(utc) ? utc : null;
}

const tail = (text: string) => (text ? text.slice(-LIMIT.outputTail) : null);

/** One test's attempts, from its testcases in the file's order (more than one: repeated runs); `testId` is their `junitTestId`. */
export function attemptsOf(testcases: JunitCase[], testId: string = junitTestId(testcases[0] as JunitCase)): Attempt[] {
  const first = testcases[0] as JunitCase;
  const runs = testcases.flatMap((testcase) => runsOf(testcase).map((run) => ({ run, testcase })));
  const outcome = outcomeOf(runs.map(({ run }) => run));
  const lastFailure = [...runs].reverse().find(({ run }) => run.failure)?.run.failure ?? null;
  const finalError = outcome === 'unexpected' || outcome === 'flaky' ? lastFailure && errorText(lastFailure) : null;
  return runs.slice(0, LIMIT.retries + 1).map(({ run, testcase }, retry, kept) => {
    const error = run.failure ? errorText(run.failure) : null;
    const isFinal = retry === kept.length - 1;
    return {
      test_id: testId,
      retry,
      status: run.status,
      duration: run.ms,
      error_message: error,
      error_location: null,
      stdout_tail: run.output ? tail(testcase.systemOut) : null,
      stderr_tail: run.output ? tail(testcase.systemErr) : null,
      started_at: startedAt(testcase),
      final: isFinal
        ? {
            outcome,
            total_duration: Math.min(
              kept.reduce((sum, { run: each }) => sum + each.ms, 0),
              2_147_483_647,
            ),
            error_message: finalError,
            failure_group_id: finalError && lastFailure ? failureSignature({ message: finalError, file: placeOf(first), line: first.line }) : null,
            skip_reason: outcome === 'skipped' ? (run.skipReason ? cut(run.skipReason, LIMIT.skipReason) : null) : null,
            failed_steps: null,
            stack_frames: lastFailure && finalError ? stackFrames(lastFailure.text) : null,
          }
        : null,
    };
  });
}

/** The files a test's testcases name, each on the attempt whose output named it (the testcase's own run). */
export function attachmentsOf(testcases: JunitCase[], testId: string): { path: string; test_case_id: string; retry: number }[] {
  const named: { path: string; test_case_id: string; retry: number }[] = [];
  let offset = 0;
  for (const testcase of testcases) {
    const runs = runsOf(testcase);
    const retry = offset + runs.findIndex((run) => run.output);
    if (retry <= LIMIT.retries) for (const path of testcase.attachments) named.push({ path, test_case_id: testId, retry });
    offset += runs.length;
  }
  return named;
}
