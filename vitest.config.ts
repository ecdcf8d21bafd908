import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// CI's second pass runs again on the embedded database (PROCTOR_TEST_PASS=embedded, Node 24,
// docs/decisions/ci-budget.md): the files whose subject is what the embedded database does
// differently (one session at a time, no COPY from a stream, its own process and files): results'
// writes, uploads, agents' leases, retention, a backup, its own faults, keys, the commands that
// open it; and the README's quick start (the newcomer's path and the demo), which a newcomer runs
// embedded. Everything else reads and writes through the same store functions on both, and the
// first pass ran it on PostgreSQL. `npm test` without the variable (the README's command) runs
// every file, on whichever database it has.
const EMBEDDED_PASS_RUNS = [
  'test/runs/**',
  'test/junit/{upload,repeats,failure-groups}.test.ts',
  'test/agents/{agents,units,batches,tokens}.test.ts',
  'test/retention/**',
  'test/storage/**',
  'test/backup/backup.test.ts',
  'test/faults/{begin-race,deadlock,embedded,serve}.test.ts',
  'test/access/keys.test.ts',
  'test/notifications/notifications.test.ts',
  'test/platform/{db,foundation,drain,npm-start,npx-proctor,storage-folders}.test.ts',
  'test/e2e/{newcomer,dashboard}.test.ts',
];
const embeddedPass = process.env.PROCTOR_TEST_PASS === 'embedded';

export default defineConfig({
  test: {
    include: embeddedPass ? EMBEDDED_PASS_RUNS : ['test/**/*.test.ts', 'badge/test/**/*.test.ts'],
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
    reporters: ['default', './test/helpers/file-times-reporter.ts'],
  },
});
