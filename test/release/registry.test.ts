import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { freePort, type ServerProcess, serverProcess, waitForHealth } from '../helpers/process.ts';
import { type Registry, startRegistry } from '../helpers/registry.ts';
import { npxProctor, type Packed, packPackages, printedKey, removeNpxInstalls, stopGroup, usersProject as usersProjectAt } from '../helpers/release.ts';
import { namesIn, type Installed, reportedTests, runReportedSuite, storedTests } from '../helpers/reports.ts';
import { trigger, waitForRun } from '../helpers/runs.ts';

// The packages as users get them: published with the release's own command to a real npm registry
// (Verdaccio, empty), then the README's commands verbatim, with the registry named in the user's
// .npmrc and nothing else. Each is timed beside the same from the packed tarballs.
const run = promisify(execFile);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-registry-'));
// The server runs suites as another user when it runs as root: that user must reach its data folder.
fs.chmodSync(scratch, 0o711);
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The README's line that starts with `start`, without its comment: the command a user copies. */
function readmeCommand(start: string): string {
  const line = readme.split('\n').find((l) => l.startsWith(start));
  if (!line) throw new Error(`the README has no line starting with ${start}`);
  return line.replace(/\s+#.*$/, '').trim();
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** An npx install of Proctor's packages: a run of another check must not be found in npm's cache. */
const isProctors = (manifest: string) => manifest.includes('@proctor/');

let registry: Registry;
let packed: Packed;
const timings: string[] = [];

/** The user's environment: none of this repository's npm or database settings, the registry from the folder's .npmrc only. */
function usersEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', PROCTOR_HTTP_WORKERS: '1', DATABASE_URL: '', ...extra };
  for (const name of Object.keys(env)) if (name.toLowerCase().startsWith('npm_config_')) delete env[name];
  return env;
}

async function timeToListening(server: ServerProcess, url: string, started: number): Promise<number> {
  await waitForHealth(url, 240_000);
  return Date.now() - started;
}

beforeAll(async () => {
  registry = await startRegistry(path.join(scratch, 'registry'));
  const started = Date.now();
  // The release's publish step, as .github/workflows/release.yml runs it (there with --provenance).
  await run('npm', ['run', '--silent', 'release:publish'], {
    cwd: ROOT,
    env: { ...process.env, npm_config_userconfig: registry.publisherConfig },
    timeout: 300_000,
  });
  timings.push(`published the three packages in ${seconds(Date.now() - started)}`);
  packed = await packPackages(scratch);
  await removeNpxInstalls(isProctors);
}, 600_000);

afterAll(async () => {
  for (const line of timings) console.log(`release check: ${line}`);
  await removeNpxInstalls(isProctors);
  await registry?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the packages the registry serves', () => {
  it.each([
    ['@proctor/badge', ['package/dist/index.js', 'package/dist/index.d.ts', 'package/fonts/DejaVuSans.ttf', 'package/fonts/DejaVuSans.LICENSE']],
    ['@proctor/reporter', ['package/dist/index.js', 'package/dist/index.d.ts']],
    [
      '@proctor/server',
      [
        'package/bin/proctor.js',
        'package/dist/bin.js',
        'package/dist/dashboard-assets/manifest.json',
        'package/migrations/001_principals.sql',
        'package/examples/playwright.config.ts',
      ],
    ],
  ])(
    'when %s is fetched from the registry, then it holds its README, LICENSE, manifest and every file its exports, types and bin name',
    async (name, expected) => {
      const tarball = path.join(scratch, `${name.replace('@proctor/', '')}-served.tgz`);
      fs.writeFileSync(tarball, await registry.tarball(name));
      const files = (await run('tar', ['tzf', tarball])).stdout.split('\n').filter(Boolean);
      const manifest = JSON.parse((await run('tar', ['xzOf', tarball, 'package/package.json'])).stdout) as {
        version: string;
        license: string;
        exports?: Record<string, string | Record<string, string>>;
        bin?: Record<string, string>;
      };
      expect(manifest.version).toBe(VERSION);
      expect(manifest.license).toBe('MIT');
      expect(files).toEqual(expect.arrayContaining(['package/README.md', 'package/LICENSE', 'package/package.json', ...expected]));
      // The `@proctor/source` condition names the sources this repository type-checks against
      // (docs/architecture.md); no user sets it, and they are not shipped.
      const forUsers = (target: Record<string, string>) =>
        Object.entries(target).flatMap(([condition, file]) => (condition === '@proctor/source' ? [] : [file]));
      const named = [
        ...Object.values(manifest.exports ?? {}).flatMap((target) => (typeof target === 'string' ? [target] : forUsers(target))),
        ...Object.values(manifest.bin ?? {}),
      ].map((file) => `package/${file.replace(/^\.\//, '')}`);
      // A subpath pattern (`./toolchain/*`) names each file its `*` matches: at least one must be there.
      const shipped = (file: string) =>
        file.includes('*')
          ? files.some((held) => new RegExp(`^${file.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('*', '[^/]+')}$`).test(held))
          : files.includes(file);
      expect(named.filter((file) => !shipped(file))).toEqual([]);
      expect(files.filter((file) => /^package\/(src|test)\/|\.test\.[jt]s$|\.tsbuildinfo$/.test(file))).toEqual([]);
      expect(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toBe((await run('tar', ['xzOf', tarball, 'package/LICENSE'])).stdout);
    },
  );
});

describe("the README's self-host command, verbatim, in an empty folder", () => {
  it('when it runs against the registry, then the server serves and the demo suite it triggers ends with its counts', async () => {
    const command = readmeCommand('npx --yes @proctor/server serve');
    const home = path.join(scratch, 'self-host');
    fs.mkdirSync(home);
    registry.useIn(home);
    const port = await freePort();
    const started = Date.now();
    const server = serverProcess(spawn('sh', ['-c', command], { cwd: home, env: usersEnv({ PORT: String(port) }), detached: true }));
    try {
      const url = `http://127.0.0.1:${port}`;
      const fromRegistry = await timeToListening(server, url, started);
      // npm warns EBADENGINE when a package it installs leaves out this Node, which the README lists.
      expect(server.output()).not.toContain('EBADENGINE');
      const api = client(url, await printedKey(server));
      const stored = await waitForRun(api, await trigger(api, { environment: 'local' }));
      // The sample suite has a failing test, a flaky one and skipped ones, in two runner projects.
      expect(stored.testRun, server.output()).toMatchObject({ state: 'failed', error_reason: null });
      expect(stored.testRun.total_count).toBe(stored.flattenedSummaryDetails.length);
      expect(stored.testRun.success_count + stored.testRun.failed_count + stored.testRun.flaky_count + stored.testRun.skipped_count).toBe(
        stored.testRun.total_count,
      );

      const tarballHome = path.join(scratch, 'self-host-tarballs');
      fs.mkdirSync(tarballHome);
      const tarballPort = await freePort();
      const tarballStarted = Date.now();
      const fromTarballs = npxProctor(packed, ['serve'], tarballHome, { PORT: String(tarballPort), PROCTOR_EXECUTOR_CONCURRENCY: '0' });
      try {
        const tarballTime = await timeToListening(fromTarballs, `http://127.0.0.1:${tarballPort}`, tarballStarted);
        timings.push(`\`${command}\` to listening: ${seconds(fromRegistry)} from the registry, ${seconds(tarballTime)} from the packed tarballs`);
      } finally {
        await stopGroup(fromTarballs);
      }
    } finally {
      await stopGroup(server);
    }
  });
});

/** A user's Playwright project outside the repository: a copy of the sample suite with @playwright/test installed from the registry. */
async function usersProject(name: string): Promise<string> {
  const playwright = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@playwright/test/package.json'), 'utf8')) as { version: string }).version;
  return usersProjectAt(
    path.join(scratch, name),
    { '@playwright/test': playwright },
    { env: usersEnv(), prepare: (project) => registry.useIn(project), timeoutMs: 300_000 },
  );
}

const installedNames = async (project: string) => namesIn(JSON.parse((await run('npm', ['ls', '--all', '--json'], { cwd: project })).stdout) as Installed);

describe("the README's reporter install, verbatim, in a Playwright project", () => {
  let project: string;
  beforeAll(async () => {
    project = await usersProject('users-project');
  }, 360_000);

  it('when it runs against the registry, then it adds the reporter and nothing else', async () => {
    const command = readmeCommand('npm install --save-dev @proctor/reporter');
    const before = await installedNames(project);
    const manifestBefore = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const started = Date.now();
    const installed = await run('sh', ['-c', `${command} 2>&1`], { cwd: project, env: usersEnv(), timeout: 300_000 });
    const fromRegistry = Date.now() - started;
    expect(installed.stdout).not.toContain('EBADENGINE');

    const after = await installedNames(project);
    expect([...after].filter((name) => !before.has(name))).toEqual(['@proctor/reporter']);
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(manifest.devDependencies).toEqual({ ...manifestBefore.devDependencies, '@proctor/reporter': `^${VERSION}` });

    const beside = await usersProject('users-project-tarball');
    const tarballStarted = Date.now();
    await run('npm', ['install', '--save-dev', '--no-audit', '--no-fund', packed.reporter], { cwd: beside, env: usersEnv(), timeout: 300_000 });
    timings.push(`\`${command}\`: ${seconds(fromRegistry)} from the registry, ${seconds(Date.now() - tarballStarted)} from the packed tarball`);
  });

  it("when the project's suite runs with it, then the stored run equals Playwright's own JSON report", async () => {
    const home = path.join(scratch, 'reporter-server');
    fs.mkdirSync(home);
    const port = await freePort();
    const server = npxProctor(packed, ['serve'], home, { PORT: String(port), PROCTOR_EXECUTOR_CONCURRENCY: '0' });
    try {
      const url = `http://127.0.0.1:${port}`;
      const key = await printedKey(server);
      await waitForHealth(url, 240_000);
      const { exitCode, output, report } = await runReportedSuite({
        cli: path.join(project, 'node_modules/@playwright/test/cli.js'),
        cwd: project,
        reporter: '@proctor/reporter',
        reportFile: path.join(scratch, 'registry-report.json'),
        env: {
          ...usersEnv(),
          PROCTOR_URL: url,
          PROCTOR_API_KEY: key,
          PROCTOR_ENVIRONMENT: 'local',
          PROCTOR_RUN_KEY: 'release-check-registry',
          DEMO_SITE_PORT: String(await freePort()),
        },
      });
      // The sample suite has a failing test: Playwright exits 1, and the reporter does not change that.
      expect(exitCode, output).toBe(1);
      const reported = reportedTests(report).sort();
      const api = client(url, key);
      const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
      const stored = storedTests(await waitForRun(api, listed.id));
      expect(reported.length).toBeGreaterThan(0);
      expect(stored).toEqual(reported);
    } finally {
      await stopGroup(server);
    }
  });
});
