import fs from 'node:fs';
import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// CI's second pass runs the suite again on the embedded database (PROCTOR_TEST_PASS=embedded,
// docs/decisions/ci-budget.md). It leaves out the browser end-to-end files, which check pages and
// Playwright runs whose database is incidental and which the first pass ran on PostgreSQL, but for
// the README's quick start (the newcomer's path and the demo), which a newcomer runs embedded.
const EMBEDDED_PASS_KEEPS = new Set(['newcomer.test.ts', 'dashboard.test.ts']);
const embeddedPassLeavesOut =
  process.env.PROCTOR_TEST_PASS === 'embedded'
    ? [
        ...fs
          .readdirSync('test/e2e')
          .filter((name) => name.endsWith('.test.ts') && !EMBEDDED_PASS_KEEPS.has(name))
          .map((name) => `test/e2e/${name}`),
        // It upgrades from old releases on both databases itself.
        'test/upgrade/**',
        // The cluster runs a PostgreSQL of its own on a host of its own.
        'test/cluster/**',
      ]
    : [];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'badge/test/**/*.test.ts'],
    // The release check (npm run release:check, vitest.release.config.ts) builds and publishes the packages: it runs alone.
    exclude: [...configDefaults.exclude, 'test/release/**', ...embeddedPassLeavesOut],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each file has a database of its own (a throwaway one on DATABASE_URL, else an embedded one),
    // so files run side by side. Vitest's default leaves a core free, which on a 2-core machine runs
    // the files one at a time. The browser files wait on Chromium and on servers in part: two at a
    // time took 392 s against 460 s.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    reporters: ['default', './test/helpers/file-times-reporter.ts'],
  },
});
