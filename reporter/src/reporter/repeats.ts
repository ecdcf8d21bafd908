// With `playwright test --repeat-each=N --reporter=<this file>`, writes to PROCTOR_REPEATS_OUTPUT how
// many of each test's repeats passed, by the test's own id (a repeat has an id of its own: it is
// mapped back to the first's). Proctor's executor burns new tests in with it.
import fs from 'node:fs';
import type { Reporter, Suite, TestCase, TestResult } from '@playwright/test/reporter';

export interface RepeatedTest {
  /** The id the test has when it is not repeated: its first repeat's. */
  id: string;
  repeats: number;
  passed: number;
}

export interface RepeatsReport {
  tests: RepeatedTest[];
}

/** What makes repeats one test: the runner project, the file and the title path. */
const keyOf = (test: TestCase) => JSON.stringify([test.parent.project()?.name ?? '', test.location.file, test.titlePath()]);

export default class RepeatsReporter implements Reporter {
  private readonly firstIds = new Map<string, string>();
  private readonly tests = new Map<string, RepeatedTest>();

  onBegin(_config: unknown, suite: Suite): void {
    for (const test of suite.allTests()) if (test.repeatEachIndex === 0) this.firstIds.set(keyOf(test), test.id);
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    // Retries are not repeats: the attempt that counts is a test's last.
    if (result.status !== 'passed' && result.status !== 'skipped' && test.results.length <= test.retries) return;
    const id = this.firstIds.get(keyOf(test)) ?? test.id;
    const entry = this.tests.get(id) ?? { id, repeats: 0, passed: 0 };
    entry.repeats++;
    if (test.outcome() === 'expected') entry.passed++;
    this.tests.set(id, entry);
  }

  onEnd(): void {
    const report: RepeatsReport = { tests: [...this.tests.values()] };
    fs.writeFileSync(process.env.PROCTOR_REPEATS_OUTPUT as string, JSON.stringify(report));
  }

  printsToStdio(): boolean {
    return false;
  }
}
