import type { AttemptStatus, FinalOutcome, WireAttempt, WireListedTest } from '../../reporter/src/api/wire.ts';

type AttemptFields = Partial<Omit<WireAttempt, 'final'>> & {
  final?: FinalOutcome | null;
  finalError?: string | null;
  failureGroupId?: string | null;
  totalDuration?: number;
};

const STATUS_OF: Record<FinalOutcome, AttemptStatus> = { expected: 'passed', unexpected: 'failed', flaky: 'passed', skipped: 'skipped' };

/**
 * One attempt as the reporter sends it, 10 ms, no output: the first and final attempt of a passing
 * test unless `fields` say otherwise. `final: null` makes it an attempt Playwright retries; a final
 * failure's error is `finalError`, else the attempt's own.
 */
export function attempt(testId: string, fields: AttemptFields = {}): WireAttempt {
  const { final: outcome = 'expected', finalError, failureGroupId = null, totalDuration, ...own } = fields;
  const status = own.status ?? (outcome ? STATUS_OF[outcome] : 'failed');
  const errorMessage = own.error_message !== undefined ? own.error_message : status === 'failed' ? 'Error: boom' : null;
  const duration = own.duration ?? 10;
  return {
    test_id: testId,
    retry: 0,
    error_location: null,
    stdout_tail: null,
    stderr_tail: null,
    started_at: null,
    ...own,
    status,
    duration,
    error_message: errorMessage,
    final: outcome
      ? {
          outcome,
          total_duration: totalDuration ?? duration,
          error_message: outcome === 'unexpected' || outcome === 'flaky' ? (finalError !== undefined ? finalError : (errorMessage ?? 'Error: boom')) : null,
          failure_group_id: failureGroupId,
        }
      : null,
  };
}

/**
 * Every attempt of a test whose final outcome is `outcome`, as Playwright with one retry reports
 * it: a passing or skipped test once; a failing one failed twice; a flaky one failed, then passed.
 */
export function attemptsOf(testId: string, outcome: FinalOutcome, error = 'Error: boom'): WireAttempt[] {
  if (outcome === 'expected' || outcome === 'skipped') return [attempt(testId, { final: outcome, duration: outcome === 'skipped' ? 0 : 100 })];
  const firstTry = attempt(testId, { final: null, status: 'failed', error_message: error, duration: 100 });
  const lastStatus = outcome === 'flaky' ? 'passed' : 'failed';
  return [
    firstTry,
    attempt(testId, {
      retry: 1,
      final: outcome,
      status: lastStatus,
      error_message: lastStatus === 'failed' ? error : null,
      finalError: error,
      duration: 100,
      totalDuration: 200,
    }),
  ];
}

/** A test as the runner lists it, in file `a.spec.ts` of runner project `p` unless `fields` say otherwise. */
export function listedTest(id: string, fields: Partial<WireListedTest> = {}): WireListedTest {
  return { id, title: `test ${id.slice(0, 8)}`, file_path: 'a.spec.ts', suites: [], runner_project: 'p', tags: [], line: 1, column: 1, ...fields };
}
