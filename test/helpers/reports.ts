import path from 'node:path';

// What a user's Playwright run reported, held against what Proctor stored of it.

export interface Installed {
  dependencies?: Record<string, Installed>;
}

/** Every package name in an `npm ls --all --json` tree. */
export function namesIn(tree: Installed, into = new Set<string>()): Set<string> {
  for (const [name, child] of Object.entries(tree.dependencies ?? {})) {
    into.add(name);
    namesIn(child, into);
  }
  return into;
}

export interface JsonSuite {
  specs?: { title: string; file: string; tests: { projectName: string; status: string; results: unknown[] }[] }[];
  suites?: JsonSuite[];
}

const STORED_STATUS: Record<string, string> = { expected: 'passed', unexpected: 'failed', flaky: 'flaky', skipped: 'skipped' };

/** Each test of Playwright's JSON report as `file | title | project | status | retries`, its status as Proctor stores it. */
export function reportedTests(suite: JsonSuite): string[] {
  const own = (suite.specs ?? []).flatMap((spec) =>
    spec.tests.map((test) => [path.basename(spec.file), spec.title, test.projectName, STORED_STATUS[test.status], test.results.length - 1].join(' | ')),
  );
  return [...own, ...(suite.suites ?? []).flatMap(reportedTests)];
}

/** Each test of a stored run in the same form, sorted. */
export function storedTests(stored: { flattenedSummaryDetails: unknown[] }): string[] {
  return (stored.flattenedSummaryDetails as { file_path: string; title: string; runner_project: string; status: string; retries: number }[])
    .map((d) => [path.basename(d.file_path), d.title, d.runner_project, d.status, d.retries].join(' | '))
    .sort();
}
