import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CHROMIUM_LAUNCH_OPTIONS, ROOT } from './playwright.ts';

// Real test runners writing JUnit XML: each runs a small suite of its own (a passing test, a
// failing one, a skipped one with a reason, and a flaky one where the runner retries) in a folder
// under the repository, so that the runners resolve from its node_modules.

const run = promisify(execFile);

export interface RunnerOutput {
  runner: string;
  file: string;
}

function suiteDir(runner: string): string {
  const dir = path.join(ROOT, '.tmp', 'junit-runners', `${runner}-${process.pid}-${Date.now()}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
}

/** Runs a runner that exits 1 on the suite's failing test; anything else is a broken set-up. */
async function runFailing(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<void> {
  try {
    await run(command, args, { cwd: options.cwd, env: { ...process.env, CI: 'true', ...options.env }, timeout: 120_000 });
    throw new Error(`${command} ${args.join(' ')} passed, where its suite has a failing test`);
  } catch (error) {
    const failure = error as { code?: number; stderr?: string; stdout?: string };
    if (failure.code !== 1)
      throw new Error(`${command} ${args.join(' ')} failed to run (${failure.code}): ${failure.stderr ?? ''}${failure.stdout ?? ''}`, { cause: error });
  }
}

export async function playwrightJunit(): Promise<RunnerOutput> {
  const dir = suiteDir('playwright');
  write(dir, {
    'playwright.config.mjs': `export default {
  testDir: '.',
  retries: 1,
  outputDir: 'test-results',
  use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
  reporter: [['junit', { outputFile: 'junit.xml', includeRetries: true }]],
};
`,
    'cart.spec.mjs': `import { expect, test } from '@playwright/test';
test('adds an item', () => { expect(1 + 1).toBe(2); });
test('totals the cart', () => { expect('cart total').toBe('checkout total'); });
test('pays by card', () => { test.skip(true, 'payments are off'); });
test('applies a coupon', ({}, testInfo) => { expect(testInfo.retry).toBe(1); });
`,
  });
  await runFailing(process.execPath, [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', '--config', 'playwright.config.mjs'], { cwd: dir });
  return { runner: 'playwright', file: path.join(dir, 'junit.xml') };
}

export async function vitestJunit(): Promise<RunnerOutput> {
  const dir = suiteDir('vitest');
  write(dir, {
    'vitest.config.mjs': 'export default {};\n',
    'cart.test.mjs': `import { expect, test } from 'vitest';
let attempts = 0;
test('adds an item', () => { expect(1 + 1).toBe(2); });
test('totals the cart', () => { expect('cart total').toBe('checkout total'); });
test.skip('pays by card', () => {});
test('applies a coupon', { retry: 1 }, () => { attempts += 1; expect(attempts).toBe(2); });
`,
  });
  await runFailing(
    process.execPath,
    [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--config', 'vitest.config.mjs', '--reporter=junit', '--outputFile=junit.xml'],
    { cwd: dir },
  );
  return { runner: 'vitest', file: path.join(dir, 'junit.xml') };
}

export async function nodeTestJunit(): Promise<RunnerOutput> {
  const dir = suiteDir('node-test');
  write(dir, {
    'cart.test.mjs': `import assert from 'node:assert';
import test from 'node:test';
test('adds an item', () => { assert.strictEqual(1 + 1, 2); });
test('totals the cart', () => { assert.strictEqual('cart total', 'checkout total'); });
test('pays by card', { skip: 'payments are off' }, () => {});
`,
  });
  await runFailing(process.execPath, ['--test', '--test-reporter=junit', '--test-reporter-destination=junit.xml', 'cart.test.mjs'], { cwd: dir });
  return { runner: 'node-test', file: path.join(dir, 'junit.xml') };
}

export async function jestJunit(): Promise<RunnerOutput> {
  const dir = suiteDir('jest');
  write(dir, {
    'cart.test.cjs': `jest.retryTimes(1);
let attempts = 0;
test('adds an item', () => { expect(1 + 1).toBe(2); });
test('totals the cart', () => { expect('cart total').toBe('checkout total'); });
test.skip('pays by card', () => {});
test('applies a coupon', () => { attempts += 1; expect(attempts).toBe(2); });
`,
  });
  await runFailing(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/jest/bin/jest.js'),
      '--rootDir',
      dir,
      '--testMatch',
      '**/*.test.cjs',
      '--reporters=default',
      '--reporters=jest-junit',
      '--no-cache',
    ],
    { cwd: dir, env: { JEST_JUNIT_OUTPUT_DIR: dir, JEST_JUNIT_OUTPUT_NAME: 'junit.xml' } },
  );
  return { runner: 'jest', file: path.join(dir, 'junit.xml') };
}

export async function pytestJunit(): Promise<RunnerOutput> {
  const dir = suiteDir('pytest');
  write(dir, {
    'test_cart.py': `import pytest

def test_adds_an_item():
    assert 1 + 1 == 2

def test_totals_the_cart():
    assert "cart total" == "checkout total"

@pytest.mark.skip(reason="payments are off")
def test_pays_by_card():
    pass
`,
  });
  await runFailing('/usr/bin/python3', ['-m', 'pytest', '-p', 'no:cacheprovider', '--junitxml=junit.xml', 'test_cart.py'], { cwd: dir });
  return { runner: 'pytest', file: path.join(dir, 'junit.xml') };
}
