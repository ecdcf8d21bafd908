import { createRequire } from 'node:module';
import path from 'node:path';

/** The folder of a package, resolved as a module at `from` would resolve it. */
export function packageRoot(name: string, from: string): string {
  return path.dirname(createRequire(from).resolve(`${name}/package.json`));
}

/**
 * The folders of the Playwright this server runs suites with (when a suite has none of its own)
 * and whose trace viewer it serves: each package found from the one that depends on it.
 */
export function installedPlaywright(): { test: string; playwright: string; core: string } {
  const test = packageRoot('@playwright/test', import.meta.url);
  const playwright = packageRoot('playwright', path.join(test, 'package.json'));
  const core = packageRoot('playwright-core', path.join(playwright, 'package.json'));
  return { test, playwright, core };
}
