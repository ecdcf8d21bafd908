import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from './recording-suite.ts';

const CONFIG = `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
if (process.env.CRASH_ON_LOAD) throw new Error(\`crashed on purpose: \${process.env.CRASH_ON_LOAD}\`);
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({
  testDir: './tests',
  retries: 0,
  timeout: 300_000,
  use: { launchOptions: executablePath ? { executablePath } : {} },
  projects: [{ name: 'alpha' }, { name: 'beta' }],
});
`;

const QUICK = `import { expect, test } from '@playwright/test';
test('adds numbers', { tag: '@quick' }, async () => {
  expect(1 + 1).toBe(2);
});
test('renders a page', async ({ page }) => {
  await page.setContent('<h1>Hello</h1>');
  await expect(page.locator('h1')).toHaveText('Hello');
});
`;

// Passes only when the run's environment reached the tests as the executor promises.
const ENVIRONMENT = `import fs from 'node:fs';
import { expect, test } from '@playwright/test';
test('sees its environment', { tag: '@env' }, async () => {
  test.skip(!process.env.CHECK_ENV, 'only when a run asks for it');
  // .env then .env.staging (env files in order), then the run's overrides
  expect(process.env.FROM_FILE).toBe('staging');
  expect(process.env.GREETING).toBe('from the override');
  expect(process.env.PLAYWRIGHT_BASE_URL).toBe('http://build.example.test/');
  expect(process.env.BASE_URL).toBe('http://build.example.test/');
  expect(process.env.DATABASE_URL).toBeUndefined();
  // Nothing of the server's own environment passes, and its process cannot be read.
  expect(process.env.HOST_ONLY_SECRET).toBeUndefined();
  expect(process.env.PROCTOR_SIGNING_SECRET).toBeUndefined();
  expect(() => fs.readFileSync(\`/proc/\${process.env.SERVER_PID}/environ\`)).toThrow();
  if (process.env.EXPECT_UNPRIVILEGED) expect(process.getuid?.()).not.toBe(0);
});
`;

const SLOW = `import { test } from '@playwright/test';
test('waits a long time', { tag: '@slow' }, async ({ page }) => {
  test.skip(!process.env.SLOW, 'only when a run asks for it');
  await page.setContent('<p>waiting</p>');
  await new Promise((resolve) => setTimeout(resolve, 240_000));
});
`;

export interface TestRepository {
  dir: string;
  cleanup(): void;
}

/**
 * A git repository made for the test: a Playwright suite with two runner projects (alpha, beta),
 * quick tests, an environment check, a slow test, .env files, and a branch `feature` with one
 * more test.
 */
export function createTestRepository(): TestRepository {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-repo-'));
  const write = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  };
  write('package.json', JSON.stringify({ name: 'throwaway-suite', private: true, type: 'module', devDependencies: { '@playwright/test': '1.65.1' } }, null, 2));
  write('playwright.config.ts', CONFIG);
  write('tests/quick.spec.ts', QUICK);
  write('tests/environment.spec.ts', ENVIRONMENT);
  write('tests/slow.spec.ts', SLOW);
  write('.env', 'FROM_FILE="file value"\nGREETING=from the file\n');
  write('.env.staging', 'FROM_FILE=staging\n');
  write('.gitignore', 'node_modules/\ntest-results/\n');
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', 'suite');
  git(dir, 'checkout', '--quiet', '-b', 'feature');
  write(
    'tests/feature.spec.ts',
    `import { expect, test } from '@playwright/test';\ntest('only on the feature branch', async () => {\n  expect(true).toBe(true);\n});\n`,
  );
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', 'feature');
  git(dir, 'checkout', '--quiet', 'main');
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
