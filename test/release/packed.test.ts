import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { throwawayDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { freePort, type ServerProcess, waitForHealth } from '../helpers/process.ts';
import {
  installedProctor,
  npxProctor,
  type Packed,
  packPackages,
  printedKey,
  documentedCommands,
  removeNpxInstalls,
  stopGroup,
  usersProject,
} from '../helpers/release.ts';
import { namesIn, type Installed, reportedTests, runReportedSuite, storedTests } from '../helpers/reports.ts';
import { trigger, waitForRun } from '../helpers/runs.ts';
import { testId } from '../helpers/server.ts';

// The packages as a user gets them: packed from this repository; the server started with npx from
// its tarball in an empty folder, and its command line tried there; the reporter installed into a
// Playwright project outside the repository (a copy of the sample suite) from its tarball, run
// there against that server, and the stored results held against Playwright's own JSON report of
// the same invocation.
const run = promisify(execFile);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-release-'));
// The server runs suites as another user when it runs as root: that user must reach its data folder.
fs.chmodSync(scratch, 0o711);
/** The oldest @playwright/test the reporter's peer range allows, and this repository's, the newest. */
const REPORTER_PEER = (JSON.parse(fs.readFileSync(path.join(ROOT, 'reporter/package.json'), 'utf8')) as { peerDependencies: Record<string, string> })
  .peerDependencies['@playwright/test'] as string;
const OLDEST_PLAYWRIGHT = REPORTER_PEER.replace(/^>=/, '');
const NEWEST_PLAYWRIGHT = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@playwright/test/package.json'), 'utf8')) as { version: string }).version;

let packed: Packed;
let server: ServerProcess;
let serverUrl: string;
let key: string;
/** The empty folder the packed server was started from. */
let serverHome: string;

beforeAll(async () => {
  packed = await packPackages(scratch);
  for (const line of packed.sizes) console.log(`release check: ${line}`);
  serverHome = path.join(scratch, 'empty');
  fs.mkdirSync(serverHome);
  const port = await freePort();
  server = npxProctor(packed, ['serve'], serverHome, { PORT: String(port) });
  serverUrl = `http://127.0.0.1:${port}`;
  key = await printedKey(server);
  await waitForHealth(serverUrl, 60_000);
}, 240_000);

afterAll(async () => {
  await stopGroup(server);
  await removeNpxInstalls((manifest) => manifest.includes(scratch));
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the packed server, started with npx from its tarballs in an empty folder', () => {
  it('when asked for --help, then it lists every command of the README and exits 0', async () => {
    const folder = fs.mkdtempSync(path.join(scratch, 'help-'));
    const help = npxProctor(packed, ['--help'], folder);
    expect(await help.exited, help.output()).toBe(0);
    const commands = documentedCommands();
    expect(commands).toContain('analytics rebuild');
    for (const command of commands) expect(help.output(), command).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('when migrate runs twice, then the first applies every migration and the second has nothing to do', async () => {
    const folder = fs.mkdtempSync(path.join(scratch, 'migrate-'));
    const db = process.env.DATABASE_URL ? await throwawayDatabase(process.env.DATABASE_URL, { prefix: 'proctor_release', migrated: false }) : null;
    try {
      const env: Record<string, string> = db ? { DATABASE_URL: db.url } : { PROCTOR_DATA_DIR: path.join(folder, '.proctor') };
      for (let pass = 0; pass < 2; pass++) {
        const migrate = npxProctor(packed, ['migrate'], folder, env);
        expect(await migrate.exited, migrate.output()).toBe(0);
        expect(migrate.output()).toContain('migrations up to date');
      }
      if (db) {
        const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from schema_migrations`;
        expect(row?.n).toBe(fs.readdirSync(path.join(ROOT, 'server/migrations')).filter((name) => name.endsWith('.sql')).length);
      }
    } finally {
      await db?.drop();
    }
  });

  it('when serve starts, then it answers /healthz, keeps its data in its folder, and runs the sample suite it carries in Chromium', async () => {
    expect((await fetch(`${serverUrl}/healthz`)).status).toBe(200);
    expect(fs.existsSync(path.join(serverHome, '.proctor'))).toBe(true);
    expect(server.output()).not.toContain('postgres.js is not patched');
    const api = client(serverUrl, key);
    const stored = await waitForRun(api, await trigger(api, { environment: 'local' }));
    // The sample suite has a failing test, a flaky one and skipped ones, in two runner projects.
    expect(stored.testRun, server.output()).toMatchObject({ state: 'failed', error_reason: null });
    expect(stored.testRun.total_count).toBe(stored.flattenedSummaryDetails.length);
    const statuses = new Set(stored.flattenedSummaryDetails.map((d: { status: string }) => d.status));
    expect([...statuses].sort()).toEqual(['failed', 'flaky', 'passed', 'skipped']);
  });

  it('when installed with install scripts turned off, then it installs and serves, says once that postgres.js is unpatched, and stores a retried batch once', async () => {
    const folder = fs.mkdtempSync(path.join(scratch, 'no-scripts-'));
    await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', packed.badge, packed.reporter, packed.server], {
      cwd: folder,
      timeout: 170_000,
    });
    const db = process.env.DATABASE_URL ? await throwawayDatabase(process.env.DATABASE_URL, { prefix: 'proctor_release', migrated: false }) : null;
    const port = await freePort();
    const plain = installedProctor(folder, ['serve'], { PORT: String(port), PROCTOR_EXECUTOR_CONCURRENCY: '0', ...(db ? { DATABASE_URL: db.url } : {}) });
    try {
      const api = client(`http://127.0.0.1:${port}`, await printedKey(plain));
      await waitForHealth(`http://127.0.0.1:${port}`);
      expect(plain.output().split('postgres.js is not patched').length - 1, plain.output()).toBe(1);
      const report = await api.post('/api/test-runs/report', { environment: 'local', total_shards: 1 });
      const runId = report.body.data.test_run.id;
      await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1)), listedTest(testId(2))], complete: true });
      const batch = { shard: 1, results: [attempt(testId(1)), attempt(testId(2))] };
      expect((await api.post(`/api/test-runs/${runId}/results`, batch)).body.data).toEqual({
        received: 2,
        recorded: 2,
        test_run: { state: 'running', cancelled_by: null },
      });
      // The retry that a COPY would refuse, and an unpatched postgres.js would never settle.
      expect((await api.post(`/api/test-runs/${runId}/results`, batch)).body.data).toEqual({
        received: 2,
        recorded: 0,
        test_run: { state: 'running', cancelled_by: null },
      });
      await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed', errors: [] });
      expect((await waitForRun(api, runId)).testRun).toMatchObject({ state: 'passed', total_count: 2, success_count: 2 });
    } finally {
      await stopGroup(plain);
      await db?.drop();
    }
  });
});

describe.each([OLDEST_PLAYWRIGHT, NEWEST_PLAYWRIGHT])('the packed reporter in a project of its own, with @playwright/test %s', (playwrightVersion) => {
  let project: string;
  beforeAll(async () => {
    project = await usersProject(
      path.join(scratch, `project-${playwrightVersion}`),
      { '@playwright/test': playwrightVersion, '@proctor/reporter': `file:${packed.reporter}` },
      { npmFlags: ['--prefer-offline'], timeoutMs: 170_000 },
    );
  });

  it('when installed from its tarball, then it brings in nothing but what @playwright/test brings', async () => {
    const tree = JSON.parse((await run('npm', ['ls', '--all', '--json'], { cwd: project })).stdout) as Installed;
    const everything = namesIn(tree);
    const playwrights = namesIn((tree.dependencies ?? {})['@playwright/test'] ?? {});
    const broughtByReporter = [...namesIn((tree.dependencies ?? {})['@proctor/reporter'] ?? {})].filter((name) => name !== '@playwright/test');
    const unexplained = [...everything].filter((name) => name !== '@proctor/reporter' && name !== '@playwright/test' && !playwrights.has(name));
    console.log(
      `release check (@playwright/test ${playwrightVersion}): the reporter brings ${broughtByReporter.length} package(s) into the project; the project holds ${everything.size}: ${[...everything].sort().join(', ')}`,
    );
    expect(broughtByReporter).toEqual([]);
    expect(unexplained).toEqual([]);
    expect(fs.existsSync(path.join(project, 'node_modules/@proctor/reporter/dist/index.d.ts'))).toBe(true);
  });

  it("when the project's suite runs with it, then the stored results equal Playwright's own JSON report, one for one", async () => {
    const reportFile = path.join(scratch, 'report.json');
    const { exitCode, output, report } = await runReportedSuite({
      cli: path.join(project, 'node_modules/@playwright/test/cli.js'),
      cwd: project,
      reporter: '@proctor/reporter',
      reportFile,
      env: {
        ...process.env,
        PROCTOR_URL: serverUrl,
        PROCTOR_API_KEY: key,
        PROCTOR_ENVIRONMENT: 'local',
        PROCTOR_RUN_KEY: `release-check-${playwrightVersion}`,
        // The variable's name before Playwright 1.47 (the helper sets the one after).
        PLAYWRIGHT_JSON_OUTPUT_NAME: reportFile,
        DEMO_SITE_PORT: String(await freePort()),
        BASE_URL: '',
        PLAYWRIGHT_BASE_URL: '',
      },
    });
    // The sample suite has a failing test: Playwright exits 1, and the reporter does not change that.
    expect(exitCode, output).toBe(1);

    const reported = reportedTests(report).sort();
    const api = client(serverUrl, key);
    const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
    const stored = storedTests(await waitForRun(api, listed.id));
    expect(reported.length).toBeGreaterThan(0);
    expect(stored).toEqual(reported);
    console.log(
      `release check (@playwright/test ${playwrightVersion}): ${stored.length} tests stored, equal to Playwright's JSON report (file, title, project, status, retries)`,
    );
  });

  // The agent lists and runs units with --test-list, which Playwright has had since 1.50: the newest only.
  it.runIf(playwrightVersion === NEWEST_PLAYWRIGHT)(
    "when the packed reporter's `proctor-ci agent` runs in the project's folder (a CI job's checkout), then it makes the build's run, plans it and runs every unit with the project's own Playwright",
    async () => {
      const runKey = `release-check-agent-${playwrightVersion}`;
      const agent = await run(
        path.join(project, 'node_modules/.bin/proctor-ci'),
        ['agent', '--environment', 'local', '--run-key', runKey, '--workspace', project, '--workdir', path.join(scratch, `agent-${playwrightVersion}`)],
        { cwd: project, env: { PATH: process.env.PATH, PROCTOR_URL: serverUrl, PROCTOR_API_KEY: key, LOG_LEVEL: 'warn' }, timeout: 240_000 },
      ).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout ?? ''}${error.stderr ?? ''}`, failed: true }));
      expect('failed' in agent, agent.stdout).toBe(false);
      expect(agent.stdout).toMatch(/^proctor-ci agent: run \d+ (has no work left|has ended \(failed\))$/m);
      const api = client(serverUrl, key);
      const runId = Number(/run (\d+)/.exec(agent.stdout)?.[1]);
      const stored = await waitForRun(api, runId);
      // The sample suite has a failing test: the run fails, with every test of both runner projects.
      expect(stored.testRun.state).toBe('failed');
      // Its units: a spec file per runner project, each reported as a shard of the run.
      expect(stored.testRun.total_shards).toBeGreaterThan(1);
      const tests = stored.flattenedSummaryDetails as { runner_project: string }[];
      expect(new Set(tests.map((test) => test.runner_project))).toEqual(new Set(['desktop', 'mobile']));
      expect(stored.testRun.total_count).toBe(tests.length);
      console.log(`release check (@playwright/test ${playwrightVersion}): proctor-ci agent ran ${tests.length} tests in ${stored.testRun.total_shards} units`);
    },
    300_000,
  );

  it('when a project is CommonJS (its config and its tests), then the reporter loads from its config by name and reports', async () => {
    const commonjs = path.join(project, 'commonjs');
    fs.mkdirSync(commonjs);
    fs.writeFileSync(path.join(commonjs, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    fs.writeFileSync(
      path.join(commonjs, 'playwright.config.js'),
      "module.exports = { testDir: '.', reporter: [['@proctor/reporter', { environment: 'local' }]] };\n",
    );
    fs.writeFileSync(
      path.join(commonjs, 'math.spec.js'),
      "const { test, expect } = require('@playwright/test');\ntest('adds', () => expect(1 + 1).toBe(2));\n",
    );
    const ran = await run(process.execPath, [path.join(project, 'node_modules/@playwright/test/cli.js'), 'test', '-c', 'commonjs/playwright.config.js'], {
      cwd: project,
      env: {
        ...process.env,
        PROCTOR_URL: serverUrl,
        PROCTOR_API_KEY: key,
        PROCTOR_RUN_KEY: `release-check-commonjs-${playwrightVersion}`,
        CI: '',
        GITHUB_RUN_ID: '',
      },
      timeout: 120_000,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout ?? ''}${error.stderr ?? ''}`, failed: true }));
    expect('failed' in ran, ran.stdout).toBe(false);
    const api = client(serverUrl, key);
    const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
    const stored = await waitForRun(api, listed.id);
    expect(stored.testRun.state, ran.stdout).toBe('passed');
    expect(stored.flattenedSummaryDetails.map((d: { title: string; status: string }) => [d.title, d.status])).toEqual([['adds', 'passed']]);
  });
});

describe('proctor-ci from the packed reporter, in a CI image with Node alone', () => {
  it('when installed without Playwright, then it brings no package with it and `run` triggers a run on the packed server and waits for its end', async () => {
    const ciJob = await usersProject(
      path.join(scratch, 'ci-job'),
      { '@proctor/reporter': `file:${packed.reporter}` },
      { npmFlags: ['--prefer-offline'], timeoutMs: 170_000 },
    );
    // Playwright is an optional peer: a job that only triggers runs or uploads JUnit XML gets nothing else.
    const installed = fs.readdirSync(path.join(ciJob, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['@proctor']);
    expect(fs.readdirSync(path.join(ciJob, 'node_modules/@proctor'))).toEqual(['reporter']);
    const bin = path.join(ciJob, 'node_modules/.bin/proctor-ci');
    expect((await run(bin, ['run', '--help'], { cwd: ciJob })).stdout).toContain('usage: proctor-ci run');
    // The packed server's demo project runs its sample suite in the environment `local`.
    const done = await run(bin, ['run', '--environment', 'local', '--tag', 'smoke', '--json', '--poll', '1'], {
      cwd: ciJob,
      env: { PATH: process.env.PATH, PROCTOR_URL: serverUrl, PROCTOR_API_KEY: key },
      timeout: 240_000,
    }).catch((error: { stdout: string; stderr: string }) => error);
    expect(JSON.parse(done.stdout), done.stderr).toMatchObject({ exit_code: 0, state: 'passed' });
  }, 300_000);
});
