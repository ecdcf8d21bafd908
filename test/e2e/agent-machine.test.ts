// Agents on one machine, with real Playwright: two agents on a suite whose webServer listens on one
// fixed port share it (--share-web-server), or each picks its own port by PROCTOR_AGENT_INDEX; a
// unit whose Playwright is killed runs again on the other agent; Playwright arguments after `--`
// (and an environment's playwright_args, for a triggered run) reach every unit, and the ones that
// would change what a unit is are refused.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { freePort, proctorCi, workspaceAgent } from '../helpers/process.ts';
import { trigger, waitForRun } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

const SERVER = `import http from 'node:http';
const port = Number(process.env.PORT);
http.createServer((req, res) => res.end('ok ' + port)).listen(port, '127.0.0.1');
`;

/** A spec of a few tests that ask the web server, slow enough that two agents' units overlap. */
function spec(name: string): string {
  return `import { expect, test } from '@playwright/test';
test('${name} is served @smoke', async ({ request }, testInfo) => {
  const body = await (await request.get('/')).text();
  expect(body).toBe('ok ' + new URL(testInfo.project.use.baseURL).port);
  expect(process.env.PROCTOR_AGENT_COUNT).toBe('2');
  await new Promise((resolve) => setTimeout(resolve, 1500));
});
test('${name} adds', async () => { expect(1 + 1).toBe(2); });
`;
}

/** The config of a suite whose web server listens on `port`: a number, or an expression of the agent's index. */
function webServerConfig(port: string): string {
  return `import { defineConfig } from '@playwright/test';
const port = ${port};
export default defineConfig({
  testDir: './tests',
  workers: 1,
  webServer: {
    command: 'node server.mjs',
    env: { PORT: String(port) },
    url: 'http://127.0.0.1:' + port + '/',
    // As many suites say; with the agents of one machine sharing the server, it is reused.
    reuseExistingServer: !process.env.CI || !!process.env.PROCTOR_SHARE_WEB_SERVER,
    timeout: 20_000,
  },
  use: { baseURL: 'http://127.0.0.1:' + port },
});
`;
}

/** A suite's folder as a CI job has it: its files, and @playwright/test installed (linked to the repository's). */
function suite(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-machine-suite-'));
  fs.chmodSync(dir, 0o755);
  const all: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'machine-suite', private: true, type: 'module', devDependencies: { '@playwright/test': '1.65.1' } }),
    'package-lock.json': JSON.stringify({ name: 'machine-suite', lockfileVersion: 3, requires: true, packages: {} }),
    ...files,
  };
  for (const [file, content] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(dir, file), content);
  }
  fs.mkdirSync(path.join(dir, 'node_modules/@playwright'), { recursive: true, mode: 0o755 });
  for (const name of ['@playwright/test', 'playwright', 'playwright-core'])
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir');
  cleanup.push(dir);
  return dir;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

let server: TestServer;
let key: string;
let triggered: ReturnType<typeof client>;
const cleanup: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_AGENT_LEASE_S: '10', PROCTOR_EXECUTOR_CONCURRENCY: '1' } });
  // No test repository: the server's executor serves none of these agents' runs.
  const project = await createProject(server.sql, { name: 'machine', repoUrl: null, repoName: 'acme/machine' });
  await server.sql`insert into environments (project_id, slug, name) values (${project.id}, 'ci', 'CI')`;
  key = await createKey(server.sql, { projectId: project.id });
});
afterAll(async () => {
  await server?.close();
  for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
});

const agent = (runKey: string, dir: string, extra: string[] = []) => workspaceAgent({ url: server.url, key }, runKey, dir, extra);

async function endedRun(runKey: string) {
  const [row] = await server.sql<{ id: number }[]>`select id from test_runs where run_key = ${runKey}`;
  const run = await waitForRun(client(server.url, key), row?.id as number);
  const units = await server.sql<{ unit: number; crashes: number }[]>`
    select unit, crashes from test_run_units where test_run_id = ${row?.id as number} order by unit`;
  return { run, units };
}

describe('agents on one machine', () => {
  it("when two agents share a suite's web server on a fixed port, then every test is stored, no unit crashed, and the server stops with the last agent", async () => {
    const port = await freePort();
    const dir = suite({
      'server.mjs': SERVER,
      'playwright.config.ts': webServerConfig(String(port)),
      'tests/a.spec.ts': spec('a'),
      'tests/b.spec.ts': spec('b'),
      'tests/c.spec.ts': spec('c'),
    });
    const exits = await Promise.all([0, 1].map(() => agent('shared-port', dir, ['--share-web-server', '--agents', '2'])));
    for (const exit of exits) expect(exit.code, exit.output).toBe(0);
    const { run, units } = await endedRun('shared-port');
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 6, success_count: 6 });
    expect(units.map((unit) => unit.crashes)).toEqual([0, 0, 0]);
    expect(await listening(port)).toBe(false);
  });

  it('when two agents pick their web server ports by PROCTOR_AGENT_INDEX, then every test is stored and no unit crashed', async () => {
    const base = await freePort();
    const dir = suite({
      'server.mjs': SERVER,
      'playwright.config.ts': webServerConfig(`${base} + Number(process.env.PROCTOR_AGENT_INDEX ?? 0)`),
      'tests/a.spec.ts': spec('a'),
      'tests/b.spec.ts': spec('b'),
      'tests/c.spec.ts': spec('c'),
    });
    const exits = await Promise.all([0, 1].map(() => agent('index-ports', dir, ['--agents', '2'])));
    for (const exit of exits) expect(exit.code, exit.output).toBe(0);
    const { run, units } = await endedRun('index-ports');
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 6, success_count: 6 });
    expect(units.map((unit) => unit.crashes)).toEqual([0, 0, 0]);
  });

  it('when a unit crashes on one agent, then the other agent runs it, the run passes, and the agent it crashed on exits 1', async () => {
    const markers = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-crash-marker-'));
    fs.chmodSync(markers, 0o777);
    cleanup.push(markers);
    const dir = suite({
      'playwright.config.ts': `import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: './tests' });\n`,
      'tests/crash.spec.ts': `import fs from 'node:fs';
import { expect, test } from '@playwright/test';
test('kills its Playwright the first time', async () => {
  const marker = ${JSON.stringify(path.join(markers, 'crashed'))};
  if (!fs.existsSync(marker)) {
    fs.writeFileSync(marker, process.env.PROCTOR_AGENT_INDEX ?? '');
    process.kill(process.ppid, 'SIGKILL');
    await new Promise(() => undefined);
  }
  expect(fs.readFileSync(marker, 'utf8')).not.toBe(process.env.PROCTOR_AGENT_INDEX);
});
`,
    });
    const exits = await Promise.all([0, 1].map(() => agent('crash-once', dir)));
    const { run, units } = await endedRun('crash-once');
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 1, success_count: 1 });
    expect(units).toEqual([{ unit: 1, crashes: 1 }]);
    const crashedOn = exits.find((exit) => exit.code === 1);
    expect(crashedOn?.output).toContain('the unit crashed: it goes to another agent');
    expect(crashedOn?.output).toMatch(/unit 1 crashed here/);
    expect(exits.filter((exit) => exit.code === 0)).toHaveLength(1);
  });
});

/** A suite of two runner projects, its tests tagged @smoke or not, in a config the default one does not name. */
function projectsSuite(): string {
  return suite({
    'playwright.config.ts': `import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: './nowhere' });\n`,
    'alt.config.ts': `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: './tests', projects: [{ name: 'alpha' }, { name: 'beta' }] });
`,
    'tests/a.spec.ts': `import { expect, test } from '@playwright/test';
test('a smoke @smoke', async ({}, testInfo) => { expect(testInfo.project.retries).toBe(1); expect(testInfo.timeout).toBe(12_345); });
test('a full', async () => { expect(true).toBe(true); });
`,
    'tests/b.spec.ts': `import { expect, test } from '@playwright/test';
test('b smoke @smoke', async ({}, testInfo) => { expect(testInfo.project.retries).toBe(1); });
test('b full', async () => { expect(true).toBe(true); });
`,
  });
}

describe('Playwright arguments', () => {
  it('when an agent is given Playwright arguments after --, then every unit runs with them: its config, project, grep, retries and timeout', async () => {
    const dir = projectsSuite();
    const { code, output } = await agent('with-args', dir, [
      '--',
      '--config=alt.config.ts',
      '--project',
      'beta',
      '--grep',
      '@smoke',
      '--retries=1',
      '--timeout=12345',
    ]);
    expect(code, output).toBe(0);
    const { run } = await endedRun('with-args');
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 2, success_count: 2 });
    const details = run.flattenedSummaryDetails as { title: string; runner_project: string }[];
    expect(details.map((test) => `${test.runner_project}: ${test.title}`).sort()).toEqual(['beta: a smoke @smoke', 'beta: b smoke @smoke']);
  });

  it.each([
    [['tests/a.spec.ts'], '"tests/a.spec.ts" is refused: it would select test files'],
    [['--shard=1/2'], '"--shard" is refused'],
    [['--workers', '2', '--last-failed'], '"--last-failed" is refused'],
    [['--only-changed=main'], '"--only-changed" is refused'],
    [['--ui'], '"--ui" is refused'],
    [['--debug'], '"--debug" is refused'],
    [['--test-list', 'x.txt'], '"--test-list" is refused'],
    [['--list'], '"--list" is refused'],
    [['--reporter=dot'], '"--reporter" is refused'],
  ])('when an agent is given %j after --, then it exits 2 naming the argument', async (args, reason) => {
    const { code, stderr } = await proctorCi(['agent', '--environment', 'ci', '--run-key', 'refused', '--', ...args], { url: server.url, key });
    expect(code).toBe(2);
    expect(stderr).toContain(`the Playwright arguments after --: ${reason}`);
  });

  it("when an environment has playwright_args, then a triggered run's listing and shards run with them; ones that change what a shard is are a 400 naming the field", async () => {
    const dir = projectsSuite();
    const project = await createProject(server.sql, { name: 'triggered', repoUrl: dir, repoName: 'acme/triggered' });
    triggered = client(server.url, await createKey(server.sql, { projectId: project.id }));
    const refused = await triggered.post('/api/environments', { name: 'CI', slug: 'ci', playwright_args: ['--workers=1', '--shard=1/2'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('body.playwright_args: "--shard" is refused: Proctor spreads the run over its shards or agents itself');
    const made = await triggered.post('/api/environments', { name: 'CI', slug: 'ci' });
    expect(made.body.data.environment.playwright_args).toEqual([]);
    const id = made.body.data.environment.id as number;
    const positional = await triggered.patch(`/api/environments/${id}`, { playwright_args: ['--grep', '@smoke', 'tests/a.spec.ts'] });
    expect(positional.status).toBe(400);
    expect(positional.body.error).toMatch(/^body\.playwright_args: "tests\/a\.spec\.ts" is refused: it would select test files/);
    const args = ['--config=alt.config.ts', '--project=beta', '--grep', '@smoke', '--retries=1', '--timeout=12345'];
    const set = await triggered.patch(`/api/environments/${id}`, { playwright_args: args });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.environment.playwright_args).toEqual(args);
    const runId = await trigger(triggered, { environment: 'ci' });
    const run = await waitForRun(triggered, runId);
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 2, success_count: 2 });
    const details = run.flattenedSummaryDetails as { title: string; runner_project: string }[];
    expect(details.map((test) => `${test.runner_project}: ${test.title}`).sort()).toEqual(['beta: a smoke @smoke', 'beta: b smoke @smoke']);
  });
});
