import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The embedded PostgreSQL is one backend: connections from test files side by side can
    // interleave their extended-protocol messages. On a real PostgreSQL, files run in parallel.
    fileParallelism: Boolean(process.env.DATABASE_URL),
    reporters: ['default'],
  },
});
