import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './helpers/http.ts';
import { EXAMPLES, ROOT } from './helpers/playwright.ts';
import { freePort, type ServerProcess, spawnProctor, waitForHealth } from './helpers/process.ts';
import { waitForRun } from './helpers/runs.ts';

// The reporter as a user gets it: packed from this repository, installed into a Playwright project
// outside it (a copy of examples/) from the tarball, run there against a Proctor server, and the
// stored results held against Playwright's own JSON report of the same invocation.
const run = promisify(execFile);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-release-'));
/** The oldest @playwright/test the reporter's peer range allows, and this repository's, the newest. */
const REPORTER_PEER = (JSON.parse(fs.readFileSync(path.join(ROOT, 'reporter/package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies['@playwright/test'] as string;
const OLDEST_PLAYWRIGHT = REPORTER_PEER.replace(/^>=/, '');
const NEWEST_PLAYWRIGHT = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@playwright/test/package.json'), 'utf8')) as { version: string }).version;

let server: ServerProcess;
let serverUrl: string;
let key: string;
let tarball: string;

beforeAll(async () => {
  const packed = JSON.parse((await run('npm', ['pack', '-w', '@proctor/reporter', '--json', '--pack-destination', scratch], { cwd: ROOT })).stdout) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: unknown[];
  }[];
  const [reporter] = packed;
  if (!reporter) throw new Error('npm pack packed nothing');
  tarball = path.join(scratch, path.basename(reporter.filename));
  console.log(`release check: ${reporter.filename}: ${(reporter.size / 1024).toFixed(1)} kB packed, ${(reporter.unpackedSize / 1024).toFixed(1)} kB unpacked, ${reporter.files.length} files`);

  const port = await freePort();
  server = spawnProctor(['serve'], { DATABASE_URL: '', PROCTOR_DATA_DIR: path.join(scratch, 'server'), PORT: String(port), PROCTOR_EXECUTOR_CONCURRENCY: '0' });
  serverUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(serverUrl);
  for (let tries = 0; tries < 100 && !key; tries++) {
    key = /prc_p_[0-9a-f]{12}_[0-9a-f]{48}/.exec(server.output())?.[0] ?? '';
    if (!key) await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  fs.rmSync(scratch, { recursive: true, force: true });
});

interface Installed {
  dependencies?: Record<string, Installed>;
}

/** Every package name in an `npm ls --all --json` tree. */
function namesIn(tree: Installed, into = new Set<string>()): Set<string> {
  for (const [name, child] of Object.entries(tree.dependencies ?? {})) {
    into.add(name);
    namesIn(child, into);
  }
  return into;
}

interface JsonSuite {
  specs?: { title: string; file: string; tests: { projectName: string; status: string; results: unknown[] }[] }[];
  suites?: JsonSuite[];
}

const STORED_STATUS: Record<string, string> = { expected: 'passed', unexpected: 'failed', flaky: 'flaky', skipped: 'skipped' };

/** Each test of the JSON report as `file | title | project | status | retries`, its status as Proctor stores it. */
function reportedTests(suite: JsonSuite): string[] {
  const own = (suite.specs ?? []).flatMap((spec) =>
    spec.tests.map((test) => [path.basename(spec.file), spec.title, test.projectName, STORED_STATUS[test.status], test.results.length - 1].join(' | ')),
  );
  return [...own, ...(suite.suites ?? []).flatMap(reportedTests)];
}

/** A user's Playwright project: a copy of examples/ outside the repository, with this Playwright and the packed reporter installed. */
async function usersProject(playwrightVersion: string): Promise<string> {
  const project = path.join(scratch, `project-${playwrightVersion}`);
  fs.mkdirSync(project);
  for (const entry of ['tests', 'site', 'playwright.config.ts']) fs.cpSync(path.join(EXAMPLES, entry), path.join(project, entry), { recursive: true });
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'a-users-suite', private: true, type: 'module', devDependencies: { '@playwright/test': playwrightVersion, '@proctor/reporter': `file:${tarball}` } }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project, timeout: 170_000 });
  return project;
}

describe.each([OLDEST_PLAYWRIGHT, NEWEST_PLAYWRIGHT])('the packed reporter in a project of its own, with @playwright/test %s', (playwrightVersion) => {
  let project: string;
  beforeAll(async () => {
    project = await usersProject(playwrightVersion);
  });

  it('when installed from its tarball, then it brings in nothing but what @playwright/test brings', async () => {
    const tree = JSON.parse((await run('npm', ['ls', '--all', '--json'], { cwd: project })).stdout) as Installed;
    const everything = namesIn(tree);
    const playwrights = namesIn((tree.dependencies ?? {})['@playwright/test'] ?? {});
    const broughtByReporter = [...namesIn((tree.dependencies ?? {})['@proctor/reporter'] ?? {})].filter((name) => name !== '@playwright/test');
    const unexplained = [...everything].filter((name) => name !== '@proctor/reporter' && name !== '@playwright/test' && !playwrights.has(name));
    console.log(`release check (@playwright/test ${playwrightVersion}): the reporter brings ${broughtByReporter.length} package(s) into the project; the project holds ${everything.size}: ${[...everything].sort().join(', ')}`);
    expect(broughtByReporter).toEqual([]);
    expect(unexplained).toEqual([]);
    expect(fs.existsSync(path.join(project, 'node_modules/@proctor/reporter/dist/index.d.ts'))).toBe(true);
  });

  it("when the project's suite runs with it, then the stored results equal Playwright's own JSON report, one for one", async () => {
    const reportFile = path.join(scratch, 'report.json');
    const child = spawn(process.execPath, [path.join(project, 'node_modules/@playwright/test/cli.js'), 'test', '--reporter=json,@proctor/reporter'], {
      cwd: project,
      env: {
        ...process.env,
        PROCTOR_URL: serverUrl,
        PROCTOR_API_KEY: key,
        PROCTOR_ENVIRONMENT: 'local',
        PROCTOR_RUN_KEY: `release-check-${playwrightVersion}`,
        // The variable's name before Playwright 1.47, and after.
        PLAYWRIGHT_JSON_OUTPUT_NAME: reportFile,
        PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
        DEMO_SITE_PORT: String(await freePort()),
        CI: '',
        GITHUB_RUN_ID: '',
        BASE_URL: '',
        PLAYWRIGHT_BASE_URL: '',
        FORCE_COLOR: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    // The sample suite has a failing test: Playwright exits 1, and the reporter does not change that.
    expect(exitCode, output).toBe(1);

    const reported = reportedTests(JSON.parse(fs.readFileSync(reportFile, 'utf8')) as JsonSuite).sort();
    const api = client(serverUrl, key);
    const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
    const stored = await waitForRun(api, listed.id);
    const storedTests = (stored.flattenedSummaryDetails as { file_path: string; title: string; runner_project: string; status: string; retries: number }[])
      .map((d) => [path.basename(d.file_path), d.title, d.runner_project, d.status, d.retries].join(' | '))
      .sort();
    expect(reported.length).toBeGreaterThan(0);
    expect(storedTests).toEqual(reported);
    console.log(`release check (@playwright/test ${playwrightVersion}): ${storedTests.length} tests stored, equal to Playwright's JSON report (file, title, project, status, retries)`);
  });

  it("when a project is CommonJS (its config and its tests), then the reporter loads from its config by name and reports", async () => {
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
      env: { ...process.env, PROCTOR_URL: serverUrl, PROCTOR_API_KEY: key, PROCTOR_RUN_KEY: `release-check-commonjs-${playwrightVersion}`, CI: '', GITHUB_RUN_ID: '' },
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
