// The choice of an affected run's tests against real Playwright releases: 1.51 selects by the
// changes since a base commit (1.46.1, the first with --only-changed, also lists a spec that imports
// nothing of the suite's: its choice, not Proctor's); the peer range's first (1.42) runs every test
// and says why, as does a base the clone lacks.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseAffected } from '../../reporter/src/toolchain/affected.ts';
import { listTests } from '../../reporter/src/toolchain/playwright.ts';
import type { Runner } from '../../reporter/src/toolchain/sandbox.ts';
import { playwrightModules } from '../helpers/playwright-versions.ts';

const FILES: Record<string, string> = {
  'playwright.config.ts': `import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: './tests', projects: [{ name: 'alpha' }] });\n`,
  'tests/helper.ts': `export const word = 'one';\n`,
  'tests/a.spec.ts': `import { test } from '@playwright/test';\nimport { word } from './helper';\ntest('a uses the helper', () => { void word; });\n`,
  'tests/b.spec.ts': `import { test } from '@playwright/test';\nimport { word } from './helper';\ntest('b uses the helper', () => { void word; });\n`,
  'tests/c.spec.ts': `import { test } from '@playwright/test';\ntest('c failed last time', () => {});\ntest('c passed', () => {});\n`,
};

const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
});

/** The suite in a git repository at `version`, its helper changed in a second commit; answers the first. */
function suiteAt(version: string): { dir: string; base: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `proctor-affected-${version}-`));
  cleanup.push(dir);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Test', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  const files = {
    ...FILES,
    'package.json': JSON.stringify({ name: 'pinned', private: true, devDependencies: { '@playwright/test': version } }),
    '.gitignore': 'node_modules\n',
  };
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  fs.symlinkSync(playwrightModules(version), path.join(dir, 'node_modules'), 'dir');
  git('init', '--quiet', '--initial-branch=main');
  git('add', '.');
  git('commit', '--quiet', '-m', 'suite');
  const base = git('rev-parse', 'HEAD');
  fs.writeFileSync(path.join(dir, 'tests/helper.ts'), `export const word = 'two';\n`);
  git('commit', '--quiet', '-am', 'helper');
  return { dir, base };
}

function runner(): Runner {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-runner-'));
  fs.mkdirSync(path.join(home, 'tmp'));
  cleanup.push(home);
  return { user: null, home, modules: null };
}

const env = { PATH: process.env.PATH, HOME: os.tmpdir() };

describe.skipIf(!process.env.DATABASE_URL)('affected tests as each Playwright tells them (run in the PostgreSQL pass)', () => {
  it("when the suite runs Playwright 1.51, then the helper's two specs and the test to run again are chosen, and a base the clone lacks runs all", async () => {
    const { dir, base } = suiteAt('1.51.1');
    const run = runner();
    const listing = await listTests(dir, env, run);
    const again = new Set(listing.tests.filter((t) => t.title === 'c failed last time').map((t) => t.id));
    const choice = await chooseAffected({ dir, env, runner: run, playwrightArgs: [], listing, base, again });
    expect(choice.kind === 'affected' && choice.tests.map((t) => t.title).sort()).toEqual(['a uses the helper', 'b uses the helper', 'c failed last time']);

    const missing = '0123456789abcdef0123456789abcdef01234567';
    expect(await chooseAffected({ dir, env, runner: run, playwrightArgs: [], listing, base: missing, again })).toEqual({
      kind: 'all',
      reason: "the base commit 0123456789ab is not in the test repository's clone (a shallow clone, or history rewritten)",
    });
  });

  it('when the suite runs Playwright 1.42, then every test runs, and the reason names the version', async () => {
    const { dir, base } = suiteAt('1.42.1');
    const run = runner();
    const listing = await listTests(dir, env, run);
    expect(await chooseAffected({ dir, env, runner: run, playwrightArgs: [], listing, base, again: new Set() })).toEqual({
      kind: 'all',
      reason: "the suite's Playwright 1.42.1 has no --only-changed (1.46 and later)",
    });
  });
});
