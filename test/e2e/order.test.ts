// `proctor-ci order` (issue 56) applied by real Playwright: after a run where one test failed, the
// order it writes puts that test and a new one in the first phase, and the two phases, run by
// Playwright with Proctor's reporter, are one run of two shards: the likely failures first.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { workspaceAgent } from '../helpers/process.ts';
import { REPORTER, ROOT } from '../helpers/playwright.ts';
import { waitForRollups, waitForRun } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

const PLAYWRIGHT_CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');
const CLI = path.join(ROOT, 'reporter/dist/cli/main.js');

/** A spec file of one test; `b` fails while BREAK_B is set. */
function spec(title: string, body = ''): string {
  return `import { expect, test } from '@playwright/test';\ntest(${JSON.stringify(title)}, async () => {\n  ${body}\n});\n`;
}

async function run(command: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; output: string }> {
  const child = spawn(process.execPath, command, {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FORCE_COLOR: '0', CI: '', GITHUB_RUN_ID: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let output = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    output += chunk;
  });
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, output };
}

/** The titles Playwright's list reporter says it ran, in the order it ran them. */
const ranTitles = (output: string) => [...output.matchAll(/(?:✓|✘)\s+\d+ \[unit\] › \S+\.spec\.ts:\d+:\d+ › (.+?) \(/g)].map((match) => match[1]);

describe('proctor-ci order applied by Playwright', () => {
  let server: TestServer;
  let key: string;
  let suite: string;

  beforeAll(async () => {
    server = await startTestServer({ clock: new TestClock('live') });
    const seeded = await seedProject(server.sql);
    key = seeded.key;
    const environmentId = await seedEnvironment(server.sql, seeded.projectId, 'ci');
    expect((await client(server.url, key).patch(`/api/environments/${environmentId}`, { order_strategy: 'failures-first' })).status).toBe(200);
    // Under the repository, so that the suite's @playwright/test resolves to the repository's.
    fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    suite = fs.mkdtempSync(path.join(ROOT, '.tmp', 'order-suite-'));
    fs.mkdirSync(path.join(suite, 'tests'));
    fs.writeFileSync(path.join(suite, 'playwright.config.ts'), "export default { testDir: 'tests', workers: 1, projects: [{ name: 'unit' }] };\n");
    fs.writeFileSync(path.join(suite, 'tests/a.spec.ts'), spec('a slow', 'await new Promise((resolve) => setTimeout(resolve, 400));'));
    fs.writeFileSync(path.join(suite, 'tests/b.spec.ts'), spec('b breaks', 'expect(process.env.BREAK_B).toBeUndefined();'));
    fs.writeFileSync(path.join(suite, 'tests/c.spec.ts'), spec('c quick'));
  });
  afterAll(async () => {
    await server?.close();
    if (suite) fs.rmSync(suite, { recursive: true, force: true });
  });

  const reporting = (runKey: string, extra: Record<string, string> = {}) => ({
    PROCTOR_URL: server.url,
    PROCTOR_API_KEY: key,
    PROCTOR_ENVIRONMENT: 'ci',
    PROCTOR_BRANCH: 'main',
    PROCTOR_RUN_KEY: runKey,
    BREAK_B: '1',
    ...extra,
  });

  it('when a test failed last time and another is new, then the order puts both first, and Playwright runs them in a first shard, the rest in a second, of one run', async () => {
    const first = await run([PLAYWRIGHT_CLI, 'test', `--reporter=list,${REPORTER}`], suite, reporting('build-1'));
    expect(first.code, first.output).toBe(1);
    // Playwright's own order, by file: the failure comes second.
    expect(ranTitles(first.output)).toEqual(['a slow', 'b breaks', 'c quick']);
    await waitForRollups(server.sql);
    fs.writeFileSync(path.join(suite, 'tests/d.spec.ts'), spec('d new'));

    const ordered = await run([CLI, 'order', '--environment', 'ci', '--branch', 'main', '--out', 'order'], suite, {
      PROCTOR_URL: server.url,
      PROCTOR_API_KEY: key,
    });
    expect(ordered.code, ordered.output).toBe(0);
    expect(ordered.output).toContain('2 of 4 tests likely to fail first: 1 failed last time');
    expect(fs.readFileSync(path.join(suite, 'order/first.txt'), 'utf8')).toBe('[unit] › b.spec.ts › b breaks\n[unit] › d.spec.ts › d new\n');
    expect(fs.readFileSync(path.join(suite, 'order/order.txt'), 'utf8').split('\n')[2]).toBe('[unit] › a.spec.ts › a slow');
    expect(ordered.stdout).toBe(
      `npx playwright test --test-list ${path.join('order', 'first.txt')}\nnpx playwright test --test-list-invert ${path.join('order', 'first.txt')}\n`,
    );
    const json = JSON.parse(fs.readFileSync(path.join(suite, 'order/order.json'), 'utf8'));
    expect(json.tests.map((test: { reasons: string[] }) => test.reasons)).toEqual([['failed_last_run', 'failure_rate'], ['new'], [], []]);

    const phaseOne = await run(
      [PLAYWRIGHT_CLI, 'test', '--test-list', 'order/first.txt', `--reporter=list,${REPORTER}`],
      suite,
      reporting('build-2', { PROCTOR_SHARD: '1', PROCTOR_TOTAL_SHARDS: '2' }),
    );
    expect(phaseOne.code, phaseOne.output).toBe(1);
    expect(ranTitles(phaseOne.output)).toEqual(['b breaks', 'd new']);
    const phaseTwo = await run(
      [PLAYWRIGHT_CLI, 'test', '--test-list-invert', 'order/first.txt', `--reporter=list,${REPORTER}`],
      suite,
      reporting('build-2', { PROCTOR_SHARD: '2', PROCTOR_TOTAL_SHARDS: '2' }),
    );
    expect(phaseTwo.code, phaseTwo.output).toBe(0);
    expect(ranTitles(phaseTwo.output)).toEqual(['a slow', 'c quick']);

    const [runRow] = await server.sql<{ id: number; state: string; total_shards: number; total_count: number }[]>`
      select id, state, total_shards, total_count from test_runs order by id desc limit 1`;
    expect(runRow).toMatchObject({ state: 'failed', total_shards: 2, total_count: 4 });
    const shards = await server.sql<{ shard: number; name: string }[]>`
      select r.shard, c.name from test_results r join test_cases c on c.id = r.test_case_id where r.test_run_id = ${runRow?.id as number} and r.is_final order by r.shard, c.name`;
    expect(shards.map((row) => `${row.shard}:${row.name}`)).toEqual(['1:b breaks', '1:d new', '2:a slow', '2:c quick']);
  });

  it("when an agent serves a failures-first run of the same suite, then its first Playwright runs the last run's failure and the new test first, the files Playwright runs after them in the same start, and the file before them in the next", async () => {
    await waitForRollups(server.sql);
    // The suite as an agent's workspace (agent-machine.test.ts's way): its own package, Playwright linked.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-order-agent-'));
    fs.chmodSync(dir, 0o755);
    for (const file of ['playwright.config.ts', 'tests']) fs.cpSync(path.join(suite, file), path.join(dir, file), { recursive: true });
    // New, so ranked; its file comes first in Playwright's order, and b's before c's and d's.
    fs.writeFileSync(path.join(dir, 'tests/0.spec.ts'), spec('0 new'));
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'order-suite', private: true, type: 'module', devDependencies: { '@playwright/test': '1.65.1' } }),
    );
    fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({ name: 'order-suite', lockfileVersion: 3, requires: true, packages: {} }));
    fs.mkdirSync(path.join(dir, 'node_modules/@playwright'), { recursive: true, mode: 0o755 });
    for (const name of ['@playwright/test', 'playwright', 'playwright-core'])
      fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir');
    try {
      const agent = await workspaceAgent({ url: server.url, key }, 'agents-order', dir);
      expect(agent.code, agent.output).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const [row] = await server.sql<{ id: number }[]>`select id from test_runs where run_key = 'agents-order'`;
    const ended = await waitForRun(client(server.url, key), row?.id as number);
    expect(ended.testRun).toMatchObject({ state: 'passed', total_count: 5, order_strategy: 'failures-first' });
    const units = await server.sql<{ file: string; risk_rank: number | null; leased_at: Date }[]>`
      select file, risk_rank, leased_at from test_run_units where test_run_id = ${row?.id as number} order by leased_at, risk_rank nulls last, file`;
    expect(units.map((unit) => [unit.file, unit.risk_rank])).toEqual([
      ['b.spec.ts', 1],
      ['0.spec.ts', 2],
      ['c.spec.ts', null],
      ['d.spec.ts', null],
      ['a.spec.ts', null],
    ]);
    // The first batch: the ranked units and the unranked files Playwright runs after them (c, d);
    // a, which it would run before b, is leased after that Playwright ended.
    const [b, ...rest] = units;
    const first = b?.leased_at.getTime() as number;
    expect(rest.slice(0, 3).map((unit) => unit.leased_at.getTime())).toEqual([first, first, first]);
    expect(rest[3]?.leased_at.getTime()).toBeGreaterThan(first);
    // In that Playwright, the likely failures ran first.
    const ran = await server.sql<{ name: string }[]>`
      select c.name from test_results r join test_cases c on c.id = r.test_case_id
      where r.test_run_id = ${row?.id as number} and r.is_final order by r.started_at`;
    expect(ran.map((result) => result.name)).toEqual(['0 new', 'b breaks', 'c quick', 'd new', 'a slow']);
  });
  it("when a spec changed since the branch's last passing run, then the order ranks its test changed: after the signs of this build's history, before the rates", async () => {
    // The suite as a git repository whose commit the branch's last run, a passing one, ran.
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Proctor', '-c', 'user.email=ci@example.com', ...args], { cwd: suite })
        .toString()
        .trim();
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'the suite');
    const commit = git('rev-parse', 'HEAD');
    const { BREAK_B: _broken, ...passingEnv } = reporting('build-3', { PROCTOR_COMMIT: commit });
    const passing = await run([PLAYWRIGHT_CLI, 'test', `--reporter=list,${REPORTER}`], suite, passingEnv);
    expect(passing.code, passing.output).toBe(0);
    await waitForRollups(server.sql);
    fs.writeFileSync(path.join(suite, 'tests/c.spec.ts'), spec('c quick', 'expect(1 + 1).toBe(2);'));

    const ordered = await run([CLI, 'order', '--environment', 'ci', '--branch', 'main', '--out', 'order-changed', '--json'], suite, {
      PROCTOR_URL: server.url,
      PROCTOR_API_KEY: key,
    });
    expect(ordered.code, ordered.output).toBe(0);
    expect(ordered.output).toContain(`1 tests changed since ${commit.slice(0, 12)}`);
    const json = JSON.parse(ordered.stdout) as { tests: { titles: string[]; reasons: string[] }[] };
    // b failed in an earlier run (a failure rate), but a change of this build says more.
    expect(json.tests.slice(0, 2).map((test) => [test.titles.at(-1), test.reasons])).toEqual([
      ['c quick', ['changed']],
      ['b breaks', ['failure_rate']],
    ]);
    expect(fs.readFileSync(path.join(suite, 'order-changed/first.txt'), 'utf8')).toBe('[unit] › c.spec.ts › c quick\n[unit] › b.spec.ts › b breaks\n');
  });
});
