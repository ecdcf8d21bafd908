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
    // The embedded PostgreSQL is one backend: connections from test files side by side can
    // interleave their extended-protocol messages. On a real PostgreSQL, files run in parallel.
    fileParallelism: Boolean(process.env.DATABASE_URL),
    // Vitest's default leaves a core free, which on a 2-core machine runs the files one at a time. The
    // browser files wait on Chromium and on servers in part: two at a time took 392 s against 460 s.
    ...(process.env.DATABASE_URL ? { maxWorkers: Math.max(2, os.availableParallelism() - 1) } : {}),
    reporters: ['default'],
  },
});
