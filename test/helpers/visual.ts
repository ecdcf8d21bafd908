import fs from 'node:fs';
import path from 'node:path';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from './playwright.ts';
import { runReportedSuite, type JsonSuite } from './reports.ts';

// A suite with screenshot assertions whose page changes between two invocations (the env var
// SHADE): baselines written first with --update-snapshots, then the changed page reported to Proctor.
// `banner` changes a 40×20 box, `card` a 30×10 one, `steady` stays; `plain` fails without a screenshot.
const SUITE = `
import { test, expect } from '@playwright/test';
const shade = process.env.SHADE ?? 'white';
const page = (box) => \`<body style="margin:0;background:white">\${box}</body>\`;

test.beforeEach(async ({ page: p }) => p.setViewportSize({ width: 200, height: 100 }));

test('banner', async ({ page: p }) => {
  await p.setContent(page(\`<div style="width:40px;height:20px;margin:10px;background:\${shade}"></div>\`));
  await expect(p).toHaveScreenshot('banner.png');
});

test('card', async ({ page: p }) => {
  await p.setContent(page(\`<div style="width:30px;height:10px;margin:50px 120px;background:\${shade === 'white' ? 'white' : 'navy'}"></div>\`));
  await expect(p).toHaveScreenshot();
});

test('steady', async ({ page: p }) => {
  await p.setContent(page('<div style="width:10px;height:10px;background:green"></div>'));
  await expect(p).toHaveScreenshot('steady.png');
});

test('plain', async () => {
  expect(1, 'an ordinary failure').toBe(2);
});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  workers: 2,
  use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
});
`;

const CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

export interface VisualSuite {
  dir: string;
  exitCode: number | null;
  output: string;
  report: JsonSuite;
}

/**
 * A folder of its own under .tmp/ (where Playwright resolves) holding `files` (name to text), with the
 * baselines Playwright's own `--update-snapshots` writes for them; its path.
 */
export async function writeSuiteWithBaselines(prefix: string, files: Record<string, string>, args: string[] = []): Promise<string> {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', prefix));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const base = { cli: CLI, cwd: dir, reportFile: path.join(dir, 'baseline.json') };
  const baseline = await runReportedSuite({ ...base, reporter: 'line', env: { ...process.env }, args: ['--update-snapshots', ...args] });
  if (baseline.exitCode !== 0) throw new Error(`writing the baselines failed:\n${baseline.output}`);
  return dir;
}

/** Writes the suite, records its baselines, then runs it on the changed page with the Proctor reporter into `local`. */
export async function runVisualSuite(serverUrl: string, key: string, env: Record<string, string> = {}): Promise<VisualSuite> {
  const dir = await writeSuiteWithBaselines('visual-suite-', { 'playwright.config.ts': CONFIG, 'visual.spec.ts': SUITE }, ['--grep-invert', 'plain']);
  return { dir, ...(await reportChangedPage(dir, serverUrl, key, env)) };
}

/** Runs the suite in `dir` on the changed page with the Proctor reporter into `local`: a run of its own. */
export function reportChangedPage(dir: string, serverUrl: string, key: string, env: Record<string, string> = {}): ReturnType<typeof runReportedSuite> {
  return runReportedSuite({
    cli: CLI,
    cwd: dir,
    reporter: REPORTER,
    reportFile: path.join(dir, 'report.json'),
    env: { ...process.env, ...reporterEnv(serverUrl, key), SHADE: 'black', ...env },
    args: [`--output=${path.join(dir, 'results')}`],
  });
}

/** What Playwright's error said of a test's screenshot: how many pixels differ. */
export function reportedDifferentPixels(report: JsonSuite, title: string): number | null {
  const specs = (suite: JsonSuite): { title: string; tests: { results: { error?: { message?: string } }[] }[] }[] => [
    ...((suite as { specs?: never[] }).specs ?? []),
    ...((suite as { suites?: JsonSuite[] }).suites ?? []).flatMap(specs),
  ];
  const spec = specs(report).find((s) => s.title === title);
  const message = spec?.tests[0]?.results[0]?.error?.message ?? '';
  const match = /(\d+) pixels \(ratio/.exec(message);
  return match ? Number(match[1]) : null;
}
