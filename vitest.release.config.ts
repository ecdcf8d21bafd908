import { defineConfig } from 'vitest/config';

// npm run release:check: the packages published to a real registry and installed from it, and the
// tarballs as packed. One file at a time: publishing rebuilds dist/, which the other file runs.
export default defineConfig({
  test: {
    include: ['test/release/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 420_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
