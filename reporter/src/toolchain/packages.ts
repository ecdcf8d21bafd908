// Where Proctor's own packages are installed: module resolution, not work (a request may ask it).
import { createRequire } from 'node:module';
import path from 'node:path';

/** The folder of a package, resolved as a module at `from` would resolve it. */
export function packageRoot(name: string, from: string): string {
  return path.dirname(createRequire(from).resolve(`${name}/package.json`));
}

export interface PlaywrightFolders {
  test: string;
  playwright: string;
  core: string;
}

/**
 * The folders of Proctor's own Playwright: the one installed beside this package (its optional
 * peer: the server's, or a CI job's), each package found from the one that depends on it. Suites
 * that have none of their own run with it (the demo's sample suite), and the server serves its
 * trace viewer. Null when none is installed.
 */
export function proctorPlaywright(): PlaywrightFolders | null {
  let test: string;
  try {
    test = packageRoot('@playwright/test', import.meta.url);
  } catch {
    return null;
  }
  const playwright = packageRoot('playwright', path.join(test, 'package.json'));
  const core = packageRoot('playwright-core', path.join(playwright, 'package.json'));
  return { test, playwright, core };
}

/** Proctor's own Playwright, which the caller cannot do without. */
export function installedPlaywright(): PlaywrightFolders {
  const folders = proctorPlaywright();
  if (!folders) throw new Error('no @playwright/test is installed beside @proctor/reporter');
  return folders;
}
