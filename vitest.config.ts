import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The release check (npm run release:check, vitest.release.config.ts) builds and publishes the packages: it runs alone.
    exclude: [...configDefaults.exclude, 'test/release/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each file has a database of its own (a throwaway one on DATABASE_URL, else an embedded one),
    // so files run side by side. Vitest's default leaves a core free, which on a 2-core machine runs
    // the files one at a time. The browser files wait on Chromium and on servers in part: two at a
    // time took 392 s against 460 s.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    reporters: ['default'],
  },
});
