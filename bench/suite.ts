// The sample suite (server/examples) run by Playwright as a user's CI runs it, timed whole.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../test/helpers/process.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const EXAMPLES = path.join(ROOT, 'server', 'examples');
export const REPORTER = path.join(ROOT, 'reporter/dist/index.js');

/** Builds the reporter as Playwright loads it: the package's compiled entry. */
export function buildReporter(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'reporter/tsconfig.json')], { stdio: 'inherit' });
}

/** `playwright test <args> --reporter=<reporters>` in the sample suite's folder: its wall time and its output. */
export async function timeSampleSuite(args: string[], reporters: string, env: Record<string, string>): Promise<{ ms: number; output: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', ...args, `--reporter=${reporters}`], {
    cwd: EXAMPLES,
    env: { ...process.env, DEMO_SITE_PORT: String(await freePort()), BASE_URL: '', PLAYWRIGHT_BASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise((resolve) => child.on('exit', resolve));
  return { ms: performance.now() - started, output };
}
