import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { serverProcess } from './process.ts';

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

export interface ReportedSuite {
  exitCode: number | null;
  output: string;
  /** Playwright's own JSON report of the invocation. */
  report: JsonSuite;
}

/**
 * `playwright test` from the Playwright at `cli`, in `cwd`, with its JSON reporter beside `reporter`
 * (written to `reportFile`), outside any CI and without colour; `env` adds the reporter's settings.
 */
export async function runReportedSuite(suite: {
  cli: string;
  cwd: string;
  reporter: string;
  reportFile: string;
  env: NodeJS.ProcessEnv;
  args?: string[];
}): Promise<ReportedSuite> {
  const child = spawn(process.execPath, [suite.cli, 'test', `--reporter=json,${suite.reporter}`, ...(suite.args ?? [])], {
    cwd: suite.cwd,
    env: { ...suite.env, PLAYWRIGHT_JSON_OUTPUT_FILE: suite.reportFile, CI: '', GITHUB_RUN_ID: '', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const playwright = serverProcess(child);
  const exitCode = await playwright.exited;
  const output = playwright.output();
  if (!fs.existsSync(suite.reportFile)) throw new Error(`Playwright wrote no JSON report (exit code ${exitCode}):\n${output}`);
  return { exitCode, output, report: JSON.parse(fs.readFileSync(suite.reportFile, 'utf8')) as JsonSuite };
}
