import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { provideFfmpeg } from '../../reporter/src/toolchain/ffmpeg.ts';
import { freePort } from './process.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const EXAMPLES = path.join(ROOT, 'server', 'examples');
export const REPORTER = path.join(ROOT, 'reporter/dist/index.js');
const RECORDER = path.join(ROOT, 'test/fixtures/record-reporter.mjs');
const PLAYWRIGHT_CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

/** Debian's Chromium for a test's own headless browser: its headless shell first, as in examples/. */
const chromiumPath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export const CHROMIUM_LAUNCH_OPTIONS = chromiumPath ? { executablePath: chromiumPath } : {};

export interface RecordedAttempt {
  id: string;
  project: string;
  title: string;
  retry: number;
  status: string;
  outcome: string;
}

export interface SuiteRun {
  exitCode: number | null;
  output: string;
  /** Every attempt as Playwright reported it. */
  recorded: RecordedAttempt[];
}

/** Runs the sample suite with real Playwright and Chromium, the Proctor reporter and a recorder. */
export async function runSampleSuite(options: {
  env: Record<string, string>;
  args?: string[];
  cwd?: string;
  onStart?: () => void;
  /** The Playwright to run (its cli.js), for a suite pinned at another release; the repository's by default. */
  playwrightCli?: string;
}): Promise<SuiteRun> {
  const recordFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-record-')), 'attempts.jsonl');
  fs.writeFileSync(recordFile, '');
  const child = spawn(process.execPath, [options.playwrightCli ?? PLAYWRIGHT_CLI, 'test', `--reporter=line,${RECORDER},${REPORTER}`, ...(options.args ?? [])], {
    cwd: options.cwd ?? EXAMPLES,
    env: {
      ...process.env,
      DATABASE_URL: '',
      BASE_URL: '',
      PLAYWRIGHT_BASE_URL: '',
      CI: '',
      GITHUB_RUN_ID: '',
      DEMO_SITE_PORT: String(await freePort()),
      RECORD_FILE: recordFile,
      FORCE_COLOR: '0',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  options.onStart?.();
  const exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const recorded = fs
    .readFileSync(recordFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordedAttempt);
  fs.rmSync(path.dirname(recordFile), { recursive: true, force: true });
  return { exitCode, output, recorded };
}

export function reporterEnv(url: string, key: string, environment = 'local'): Record<string, string> {
  return { PROCTOR_URL: url, PROCTOR_API_KEY: key, PROCTOR_ENVIRONMENT: environment };
}

/**
 * The environment a suite records video with: Debian's ffmpeg linked where the repository's
 * Playwright looks for its own build (which cannot be downloaded here), in a registry of the tests'.
 */
export function videoEnv(): Record<string, string> {
  const registry = path.join(ROOT, '.tmp', 'ms-playwright');
  const encoder = provideFfmpeg(registry, path.join(ROOT, 'node_modules', 'playwright-core'));
  if (encoder.kind === 'none') throw new Error(encoder.reason);
  return { PLAYWRIGHT_BROWSERS_PATH: registry };
}
