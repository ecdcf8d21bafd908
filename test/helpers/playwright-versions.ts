// Real releases of @playwright/test across the reporter's peer range (>=1.42), for suites pinned at
// each: installed from the registry once per machine into .tmp/playwright/<version> (gitignored),
// about 11-15 s a version the first time, nothing after. Browsers are never downloaded: the suites
// launch Debian's Chromium through launchOptions.executablePath.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './playwright.ts';

/** The ends of the peer range and between: 1.42 (the first with tags), a 1.4x, 1.51 (no --test-list), the repo's own. */
export const PLAYWRIGHT_VERSIONS = ['1.42.1', '1.46.1', '1.51.1', '1.65.1'] as const;

const CACHE = path.join(ROOT, '.tmp', 'playwright');

/** The node_modules folder holding @playwright/test at `version`, installed on first use (one install at a time across test files). */
export function playwrightModules(version: string): string {
  const own = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@playwright/test/package.json'), 'utf8')).version;
  if (version === own) return path.join(ROOT, 'node_modules');
  const modules = path.join(CACHE, version, 'node_modules');
  const installed = () => fs.existsSync(path.join(modules, '@playwright/test/package.json'));
  if (installed()) return modules;
  fs.mkdirSync(CACHE, { recursive: true });
  const lock = path.join(CACHE, `${version}.lock`);
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (installed()) return modules;
      execFileSync('sleep', ['0.5']);
    }
  }
  try {
    if (installed()) return modules;
    const partial = path.join(CACHE, `${version}.partial-${process.pid}`);
    fs.rmSync(partial, { recursive: true, force: true });
    execFileSync('npm', ['install', '--prefix', partial, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `@playwright/test@${version}`], {
      env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
      stdio: 'ignore',
      timeout: 5 * 60_000,
    });
    fs.rmSync(path.join(CACHE, version), { recursive: true, force: true });
    fs.renameSync(partial, path.join(CACHE, version));
    return modules;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
