import path from 'node:path';
import type { TestCase, TestResult, TestStep } from '@playwright/test/reporter';
import { plainText, storable } from '../text/ansi.ts';
import { failureSignature } from '../text/signature.ts';
import { WIRE_LIMITS, type WireAttempt, type WireListedTest, type WireStep } from '../api/wire.ts';

const TAIL_CHARS = 4000;

export type ListedTest = WireListedTest;
export type Attempt = WireAttempt;

function relative(rootDir: string, file: string): string {
  return path.relative(rootDir, file).split(path.sep).join('/');
}

function runnerProject(test: TestCase): string {
  return test.parent.project()?.name ?? '';
}

/** A test as listed to Proctor; `ownersOf` gives its owners (owners.ts), sent only when it has some. */
export function listTest(test: TestCase, rootDir: string, ownersOf?: (test: TestCase) => string[]): ListedTest {
  const owners = ownersOf ? ownersOf(test) : [];
  return {
    id: test.id,
    title: storable(test.title),
    file_path: storable(relative(rootDir, test.location.file)),
    // titlePath: root, project, file, ...describes, title
    suites: test.titlePath().slice(3, -1).map(storable),
    runner_project: storable(runnerProject(test)),
    tags: test.tags.map(storable),
    line: test.location.line ?? null,
    column: test.location.column ?? null,
    ...(owners.length > 0 ? { owners } : {}),
  };
}

function tail(chunks: (string | Buffer)[]): string | null {
  if (chunks.length === 0) return null;
  const text = plainText(chunks.map(String).join(''));
  return text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text;
}

function errorText(result: TestResult): string | null {
  const messages = (result.errors.length > 0 ? result.errors : result.error ? [result.error] : [])
    .map((error) => plainText(error.message ?? error.value ?? ''))
    .filter(Boolean);
  return messages.length > 0 ? messages.join('\n\n').slice(0, WIRE_LIMITS.errorMessage) : null;
}

/** The steps that led to a failure, outermost first: each failed step, into the one inside it that failed. */
function failedSteps(steps: TestStep[]): WireStep[] {
  const path: WireStep[] = [];
  let level = steps;
  while (path.length < WIRE_LIMITS.failedSteps) {
    const failed = level.find((step) => step.error);
    if (!failed) break;
    path.push({ category: failed.category.slice(0, WIRE_LIMITS.stepCategory), title: failed.title.slice(0, WIRE_LIMITS.stepTitle) });
    level = failed.steps;
  }
  return path;
}

/** The failure's first stack frames in the suite's own files (not its packages, not Node's), relative to the project, innermost first. */
function userFrames(result: TestResult, rootDir: string): string[] {
  const stack = plainText(result.error?.stack ?? '');
  const frames: string[] = [];
  for (const line of stack.split('\n')) {
    const at = /^\s*at (?:.*? \()?(?:file:\/\/)?(\/[^():]+|[A-Za-z]:\\[^():]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!at) continue;
    const file = at[1] as string;
    if (file.includes(`${path.sep}node_modules${path.sep}`) || !path.resolve(file).startsWith(rootDir + path.sep)) continue;
    frames.push(`${relative(rootDir, file)}:${at[2]}:${at[3]}`.slice(0, WIRE_LIMITS.stackFrame));
    if (frames.length === WIRE_LIMITS.stackFrames) break;
  }
  return frames;
}

/** The reason given to `test.skip(…, reason)` or `test.fixme(…, reason)`, at run time or where the test is declared. */
function skipReasonOf(test: TestCase, result: TestResult): string | null {
  const annotations = [...(result.annotations ?? []), ...test.annotations];
  const reason = annotations.find((annotation) => (annotation.type === 'skip' || annotation.type === 'fixme') && annotation.description)?.description;
  return reason ? reason.slice(0, WIRE_LIMITS.skipReason) : null;
}

/** Whether Playwright will run this test again after this attempt. */
function willRetry(test: TestCase, result: TestResult): boolean {
  if (result.status === 'skipped' || result.status === 'interrupted') return false;
  return result.status !== test.expectedStatus && result.retry < test.retries;
}

export function toAttempt(test: TestCase, result: TestResult, rootDir: string): Attempt {
  const location = result.error?.location;
  const attempt: Attempt = {
    test_id: test.id,
    retry: result.retry,
    status: result.status,
    duration: Math.max(0, Math.round(result.duration)),
    error_message: errorText(result),
    error_location: location ? `${relative(rootDir, location.file)}:${location.line}:${location.column}` : null,
    stdout_tail: tail(result.stdout),
    stderr_tail: tail(result.stderr),
    started_at: result.startTime ? result.startTime.toISOString() : null,
    parallel_index: Number.isInteger(result.parallelIndex) && result.parallelIndex >= 0 ? result.parallelIndex : null,
    final: null,
  };
  if (willRetry(test, result)) return attempt;
  const outcome = test.outcome();
  const failing = outcome === 'flaky' ? test.results.find((r) => r.status !== test.expectedStatus) : result;
  const finalError = outcome === 'expected' || outcome === 'skipped' ? null : failing ? errorText(failing) : null;
  const skipReason = outcome === 'skipped' ? skipReasonOf(test, result) : null;
  const failed = failing && failing.status !== 'passed' && outcome !== 'expected' && outcome !== 'skipped' ? failing : null;
  const steps = failed ? failedSteps(failed.steps) : [];
  const frames = failed ? userFrames(failed, rootDir) : [];
  attempt.final = {
    ...(skipReason !== null ? { skip_reason: skipReason } : {}),
    ...(steps.length > 0 ? { failed_steps: steps } : {}),
    ...(frames.length > 0 ? { stack_frames: frames } : {}),
    outcome,
    total_duration: test.results.reduce((sum, r) => sum + Math.max(0, Math.round(r.duration)), 0),
    error_message: finalError,
    failure_group_id:
      outcome === 'unexpected' && finalError
        ? failureSignature({
            message: finalError,
            file: location ? relative(rootDir, location.file) : relative(rootDir, test.location.file),
            line: location?.line ?? test.location.line,
          })
        : null,
  };
  return attempt;
}

/** A shard's list is the whole suite's share unless the command line filtered tests. */
export function listIsComplete(argv: string[]): boolean {
  const testIndex = argv.indexOf('test');
  const args = testIndex >= 0 ? argv.slice(testIndex + 1) : [];
  const filtering = /^(-g|--grep|--grep-invert|--last-failed|--only-changed|--test-list|--test-list-invert)(=|$)/;
  const valued = /^(--project|--shard|--reporter|--config|-c|--workers|-j|--retries|--timeout|--output|--max-failures|--repeat-each|--global-timeout)$/;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (filtering.test(arg)) return false;
    if (valued.test(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith('-')) return false;
  }
  return true;
}
