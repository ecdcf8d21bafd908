// A failure's kind, decided from what Playwright says of it: its error's message (and stack), and,
// where the reporter sent them, the steps that led to it; and a unit test's, from what its runner
// wrote in JUnit XML (assertion, timeout, exception, setup or fixture, crash). Pure; measured against a corpus of real
// failures labelled by hand (test/fixtures/category-corpus.json, bench/categories.ts).

import { stripAnsi } from '@proctor/reporter/signature';

export const FAILURE_CATEGORIES = ['assertion', 'locator', 'timeout', 'navigation', 'network', 'snapshot', 'crash', 'setup', 'exception', 'unknown'] as const;
/** The kinds only unit tests' failures have (Playwright's are told apart finer). */
export const UNIT_TEST_CATEGORIES: readonly FailureCategory[] = ['exception'];
export type FailureCategory = (typeof FAILURE_CATEGORIES)[number];

/** A step on the way to the failure, outermost first: Playwright's category (`hook`, `fixture`, `expect`, `pw:api`) and title. */
export interface FailedStep {
  category: string;
  title: string;
}

export interface FailureEvidence {
  message: string | null;
  stack?: string | null;
  steps?: FailedStep[];
}

const SETUP_MESSAGE = /config\.webServer|global ?setup|globalSetup|Error in (global|worker) (setup|teardown)/i;
const CRASH =
  /Target page, context or browser has been closed|Target crashed|Page crashed|page has crashed|Browser (has been )?closed|browser has disconnected|Execution context was destroyed/i;
const SNAPSHOT = /toMatchSnapshot|toHaveScreenshot|toMatchAriaSnapshot|A snapshot doesn't exist|Screenshot comparison failed/;
const TEST_TIMEOUT = /^Test timeout of \d+ms exceeded/m;
const WAITED_ON_SOMETHING_ELSE =
  /\b(page|frame)\.(waitForFunction|waitForEvent|waitForResponse|waitForRequest|waitForTimeout)\b|while waiting on the predicate|while waiting for event/;
const NAVIGATION_CALL = /^(\w*Error: )?(page|frame)\.(goto|reload|goBack|goForward|waitForURL|waitForNavigation|waitForLoadState)\b/m;
const NAVIGATION_ERROR = /net::ERR_\w+|NS_ERROR_\w+|Cannot navigate to invalid URL|navigating to ".*", waiting until/;
const NETWORK = /apiRequestContext\.\w+|expect\(response\)\.toBeOK|\bfetch failed\b|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|socket hang up/;
const LOCATOR =
  /strict mode violation|element\(s\) not found|element is not (visible|enabled|attached|editable|stable)|element is outside of the viewport|<element\(s\) not found>/;
const LOCATOR_ACTION_TIMEOUT = /^(\w*Error: )?(locator|page|frame|elementHandle)\.\w+: Timeout \d+ms exceeded/m;
const EXPECTATION = /^(\w*Error: )?expect(\.soft|\.poll)?\(/m;

// Unit tests' failures, as runners write them in JUnit XML (JUnit, TestNG, pytest, Jest, Mocha, Go, Rust, Catch2…).
const UNIT_SETUP =
  /failed on setup with|error at setup of|failed on teardown with|fixture '[^']+' not found|"before (all|each)" hook|"after (all|each)" hook|\bbefore(All|Each) hook\b|@Before(All|Each|Class|Method|Suite)?\b|@After(All|Class)\b|\bsetUpClass\b|\bsetUpModule\b|Configuration Failures?\b|ExtensionConfigurationException|initializationError|ParameterResolutionException|TestInstantiationException/i;
const UNIT_CRASH =
  /The forked VM terminated|forked VM crashed|Segmentation fault|\bSIGSEGV\b|\bSIGABRT\b|\bSIGKILL\b|core dumped|Fatal Python error|worker (process )?(crashed|exited unexpectedly|has failed to exit)|Jest worker encountered|\bOutOfMemoryError\b|JavaScript heap out of memory|node:internal\/process\/|Test run aborted/i;
const UNIT_TIMEOUT =
  /\bTimeoutException\b|TestTimedOutException|ThreadTimeoutException|\btimed out after\b|Exceeded timeout of \d+ ?ms|Timeout of \d+ ?ms exceeded|Failed: Timeout >|\btest timed out\b|\bTimeout\s*>\s*[\d.]+s\b|panicked at .*timed out|deadline exceeded/i;
const UNIT_ASSERTION =
  /\bAssertionError\b|AssertionFailedError|ComparisonFailure|\bAssertionException\b|MultipleFailuresError|ExpectationNotMetException|^E\s+assert\b|^\s*assert\b.*(==|!=|\bin\b|\bis\b)|expected:? ?<.*> but was:? ?<|\bexpected \S.* (to|but) (equal|be|have|got|was)\b|assertion (`[^`]*` )?failed|\bcheck_eq\(|\bREQUIRE\(|\bCHECK\(|\bExpected\b[^\n]*\n[^\n]*\b(Actual|Received|but was|got)\b|\bShould\w*\(|\bassert\w*\(/m;
/** A named error or exception thrown, not an assertion's: `java.lang.NullPointerException`, `TypeError: x is undefined`, pytest's `E   KeyError: 'id'`. */
const EXCEPTION =
  /^(E\s+)?(?:[\w$]+\.)*(?!Error\b)[A-Z]\w*(Exception|Error|Panic|Fault)\b(:|$|\s)|\bTraceback \(most recent call last\)|\bpanicked at\b|\bException in thread\b|\bthrew exception\b|\bUncaught\b|unhandled (exception|error|rejection)/m;

/** Whether the failure happened before the test's own lines: in a hook or a fixture. */
function inSetup(steps: FailedStep[]): boolean {
  return steps.some((step) => step.category === 'fixture' || (step.category === 'hook' && /^before(All|Each) hook\b/.test(step.title)));
}

/** Whether the failing check was one that retries until a time runs out (`expect.poll`, `toPass`). */
function retriedUntilTimeout(steps: FailedStep[]): boolean {
  return steps.some((step) => step.category === 'expect' && /^Expect "(poll |toPass)/.test(step.title));
}

export function failureCategory(evidence: FailureEvidence): FailureCategory {
  const message = stripAnsi(evidence.message ?? '');
  const steps = evidence.steps ?? [];
  if (message.trim() === '' && steps.length === 0) return 'unknown';
  if (inSetup(steps) || SETUP_MESSAGE.test(message) || UNIT_SETUP.test(message)) return 'setup';
  if (CRASH.test(message)) return 'crash';
  if (SNAPSHOT.test(message)) return 'snapshot';
  if (TEST_TIMEOUT.test(message) || WAITED_ON_SOMETHING_ELSE.test(message) || retriedUntilTimeout(steps)) return 'timeout';
  if (NAVIGATION_CALL.test(message) || NAVIGATION_ERROR.test(message)) return 'navigation';
  if (NETWORK.test(message)) return 'network';
  if (LOCATOR.test(message) || LOCATOR_ACTION_TIMEOUT.test(message)) return 'locator';
  if (EXPECTATION.test(message) || steps.some((step) => step.category === 'expect')) return 'assertion';
  return unitTestCategory(message);
}

/** A unit test's kind of failure, from its message and stack as its runner wrote them (JUnit XML). */
function unitTestCategory(message: string): FailureCategory {
  if (UNIT_CRASH.test(message)) return 'crash';
  if (UNIT_TIMEOUT.test(message)) return 'timeout';
  if (UNIT_ASSERTION.test(message)) return 'assertion';
  if (EXCEPTION.test(message)) return 'exception';
  return 'unknown';
}
