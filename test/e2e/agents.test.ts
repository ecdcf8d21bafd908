// Agents as processes of `proctor agent` (the server package's command) and `proctor-ci agent` (the
// reporter package's bin, as a CI machine installs it) on this machine, joining one run of a real
// Playwright suite in a git repository: each checks it out, the first plans its units, and they pull them.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesMarked } from '../../reporter/src/toolchain/playwright.ts';
import { client } from '../helpers/http.ts';
import { git, recordingSuite } from '../helpers/recording-suite.ts';
import { serverProcess, type ServerProcess } from '../helpers/process.ts';
import { waitForRun, waitUntil } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

/** Every test writes what it saw to RECORD_DIR (from the repository's .env): one file per execution. */
const RECORD = `import fs from 'node:fs';
import path from 'node:path';
export function record(testInfo, extra = {}) {
  const name = [testInfo.title, testInfo.retry, process.pid, Date.now(), Math.random().toString(36).slice(2)].join('~');
  fs.writeFileSync(path.join(process.env.RECORD_DIR, name), JSON.stringify({
    title: testInfo.title, retry: testInfo.retry, key: process.env.PROCTOR_API_KEY ?? null,
    database: process.env.DATABASE_URL ?? null, agentSecret: process.env.AGENT_ONLY_SECRET ?? null,
    // The setup project ran before this test, in the same Playwright (the unit's shard).
    setupFirst: fs.existsSync(path.join(process.env.RECORD_DIR, 'setup-for-' + process.env.PROCTOR_SHARD)), ...extra,
  }));
}
`;

const FILES: Record<string, string> = {
  'playwright.config.ts': `import fs from 'node:fs';
import { defineConfig } from '@playwright/test';
const executablePath = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((candidate) => fs.existsSync(candidate));
export default defineConfig({ testDir: './tests', retries: 1, timeout: 60_000, use: { launchOptions: executablePath ? { executablePath } : {} }, projects: [{ name: 'setup', testMatch: /.*\\.setup\\.ts/ }, { name: 'alpha', dependencies: ['setup'] }] });
`,
  'tests/record.mjs': RECORD,
  'tests/auth.setup.ts': `import fs from 'node:fs';
import { test } from '@playwright/test';
import { record } from './record.mjs';
test('signs in', async ({}, testInfo) => {
  record(testInfo);
  fs.writeFileSync(process.env.RECORD_DIR + '/setup-for-' + process.env.PROCTOR_SHARD, '');
});
`,
  'tests/pages.spec.ts': `import { expect, test } from '@playwright/test';
import { record } from './record.mjs';
test('renders a page', async ({ page }, testInfo) => {
  record(testInfo);
  await page.setContent('<h1>Hello</h1>');
  await expect(page.locator('h1')).toHaveText('Hello');
});
test('adds numbers', async ({}, testInfo) => { record(testInfo); expect(1 + 1).toBe(2); });
`,
  'tests/parallel.spec.ts': `import { expect, test } from '@playwright/test';
import { record } from './record.mjs';
test.describe.configure({ mode: 'parallel' });
for (const n of [1, 2, 3]) test(\`parallel \${n}\`, async ({}, testInfo) => { record(testInfo); expect(n).toBeGreaterThan(0); });
`,
  'tests/flaky.spec.ts': `import { expect, test } from '@playwright/test';
import { record } from './record.mjs';
test('passes on its retry', async ({}, testInfo) => { record(testInfo); expect(testInfo.retry).toBe(1); });
test('fails every time', async ({}, testInfo) => { record(testInfo); expect(testInfo.retry).toBe(-1); });
`,
  'tests/slow.spec.ts': `import { test } from '@playwright/test';
import fs from 'node:fs';
import { record } from './record.mjs';
test('takes its time', async ({}, testInfo) => {
  fs.writeFileSync(process.env.RECORD_DIR + '/slow-started-' + process.pid, '');
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.SLOW_MS ?? 4000)));
  record(testInfo);
});
`,
  '.gitignore': 'node_modules/\ntest-results/\n',
};

/** Per test, its attempts: 1 for the five that pass, 2 for the flaky and the failing ones. */
const ATTEMPTS: Record<string, number> = {
  'renders a page': 1,
  'adds numbers': 1,
  'parallel 1': 1,
  'parallel 2': 1,
  'parallel 3': 1,
  'passes on its retry': 2,
  'fails every time': 2,
  'takes its time': 1,
};
/** The setup project's test: run with every unit of the project depending on it, as in every shard of --shard; recorded once. */
const SETUP = 'signs in';
const COUNTS = { total_count: 9, success_count: 7, failed_count: 1, flaky_count: 1, skipped_count: 0 };

/** The two commands that run the one agent: the server package's, and the reporter package's built bin. */
type AgentCommand = 'proctor' | 'proctor-ci';
const AGENT_COMMAND: Record<AgentCommand, string[]> = {
  proctor: ['--import', 'tsx', 'server/src/bin.ts'],
  'proctor-ci': [path.resolve('reporter/dist/cli/main.js')],
};

/** An agent in a process group of its own (so that a test can kill it as a machine dies), its key in its environment. */
function agentProcess(url: string, key: string, args: string[], extraEnv: Record<string, string> = {}, command: AgentCommand = 'proctor'): ServerProcess {
  const child = spawn(process.execPath, [...AGENT_COMMAND[command], 'agent', '--url', url, ...args], {
    env: {
      ...process.env,
      PROCTOR_API_KEY: key,
      AGENT_ONLY_SECRET: 'the agent keeps this',
      DATABASE_URL: 'postgres://agent-machine/secret',
      LOG_LEVEL: 'warn',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return serverProcess(child);
}

/** The suite in a git repository, and the folder its tests record their executions in; a project and its `ci` environment. */
async function suiteProject(server: TestServer): Promise<{ repo: string; records: string; key: string }> {
  const { repo, records, key } = await recordingSuite(server.sql, 'agents', FILES);
  return { repo, records, key };
}

/** Each execution the suite recorded since the last call. */
function executionsIn(records: string): { title: string; retry: number; key: string | null; database: string | null; agentSecret: string | null }[] {
  const found = fs
    .readdirSync(records)
    .filter((name) => name.includes('~'))
    .map((name) => JSON.parse(fs.readFileSync(path.join(records, name), 'utf8')));
  for (const name of fs.readdirSync(records)) fs.rmSync(path.join(records, name));
  return found;
}

const attemptsPerTest = (list: { title: string; retry: number }[]) =>
  Object.fromEntries(
    Object.keys(ATTEMPTS).map((title) => [
      title,
      list
        .filter((e) => e.title === title)
        .map((e) => e.retry)
        .sort(),
    ]),
  );
const EVERY_ATTEMPT_ONCE = Object.fromEntries(Object.entries(ATTEMPTS).map(([title, n]) => [title, Array.from({ length: n }, (_, i) => i)]));

describe('agents pulling one run of a real suite', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let projectKey: string;
  let repo: string;
  let records: string;
  let workdir: string;
  const agents: ServerProcess[] = [];

  beforeAll(async () => {
    server = await startTestServer({ clock: new TestClock('live'), env: { PROCTOR_AGENT_LEASE_S: '3' } });
    ({ repo, records, key: projectKey } = await suiteProject(server));
    api = client(server.url, projectKey);
    workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-agent-work-'));
    fs.chmodSync(workdir, 0o711);
  });
  afterAll(async () => {
    for (const agent of agents) agent.child.kill('SIGKILL');
    await server?.close();
    for (const dir of [repo, records, workdir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function startAgent(runKey: string, name: string, extraEnv: Record<string, string> = {}, command: AgentCommand = 'proctor'): ServerProcess {
    const agent = agentProcess(server.url, projectKey, ['--environment', 'ci', '--run-key', runKey, '--name', name, '--workdir', workdir], extraEnv, command);
    agents.push(agent);
    return agent;
  }

  const executions = () => executionsIn(records);

  async function revisionOf(runId: number) {
    const [row] = await server.sql<{ test_run_branch: string | null; commit: string | null; test_run_head_sha: string | null }[]>`
      select test_run_branch, "commit", test_run_head_sha from test_runs where id = ${runId}`;
    return row;
  }

  async function runOfKey(runKey: string): Promise<number> {
    let id = 0;
    await waitUntil(
      async () => {
        const [row] = await server.sql<{ id: number }[]>`select id from test_runs where run_key = ${runKey}`;
        id = row?.id ?? 0;
        return id > 0;
      },
      60_000,
      `the run of ${runKey}`,
    );
    return id;
  }

  it('when three agents join one run, two of `proctor agent` and one of `proctor-ci agent`, then every test runs exactly once per attempt, setup first in each unit, and the counts are a whole run of the suite', async () => {
    // proctor-ci's agent joins first, so that it is in the run when the first leases are packed
    // against the agents the run knows (a late joiner may find every unit leased); the other two
    // join while it plans.
    const first = startAgent('build-three', 'c', { LOG_LEVEL: 'info' }, 'proctor-ci');
    const runId = await runOfKey('build-three');
    const started = [startAgent('build-three', 'a'), startAgent('build-three', 'b'), first];
    const codes = await Promise.all(started.map((agent) => agent.exited));
    expect(codes, started.map((agent) => agent.output()).join('\n')).toEqual([0, 0, 0]);
    for (const [agent, name] of started.map((agent, i) => [agent, i < 2 ? 'proctor agent' : 'proctor-ci agent'] as const))
      expect(agent.output()).toMatch(new RegExp(`^${name}: run \\d+ (has no work left|has ended)`, 'm'));
    // proctor-ci's log: a JSON object a line, as the server's; never a key.
    const logged = (started[2] as ServerProcess).output().trim().split('\n').slice(0, -1);
    const entries = logged.map((line) => JSON.parse(line) as { level: number; msg: string; test_run_id?: number });
    expect(entries).toContainEqual(expect.objectContaining({ level: 30, msg: 'joined the run', test_run_id: runId }));
    expect(entries.some((entry) => entry.msg === 'running a unit' || entry.msg === 'running units in one Playwright')).toBe(true);
    expect(logged.join('\n')).not.toMatch(/prc_/);

    const run = (await waitForRun(api, runId)).testRun;
    expect(run).toMatchObject({ state: 'failed', ...COUNTS, total_shards: 6 });
    // No CI named a branch or a commit: the run has its agents' checkout's.
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    expect(await revisionOf(runId)).toEqual({ test_run_branch: 'main', commit: head, test_run_head_sha: head });
    const seen = executions();
    expect(attemptsPerTest(seen)).toEqual(EVERY_ATTEMPT_ONCE);
    const units = await server.sql<
      { file: string; agent_id: number; leases: number }[]
    >`select file, agent_id, leases from test_run_units where test_run_id = ${runId}`;
    expect(units.map((u) => u.file).sort()).toEqual([
      'flaky.spec.ts',
      'pages.spec.ts',
      'parallel.spec.ts',
      'parallel.spec.ts',
      'parallel.spec.ts',
      'slow.spec.ts',
    ]);
    // Setup ran first in each batch of units (one Playwright each, as Playwright runs a project's
    // dependencies): at least once for each agent that ran units, at most once a unit; its result is one.
    const setups = seen.filter((e) => e.title === SETUP).length;
    expect(setups).toBeGreaterThanOrEqual(new Set(units.map((u) => u.agent_id)).size);
    expect(setups).toBeLessThanOrEqual(units.length);
    expect(seen.filter((e) => e.title !== SETUP).every((e) => (e as { setupFirst?: boolean }).setupFirst)).toBe(true);
    expect(new Set(units.map((u) => u.agent_id)).size).toBeGreaterThan(1);
    expect(units.every((u) => u.leases === 1)).toBe(true);

    // The tests had the run's own key, not the agent's, and nothing else of the agent's environment.
    // The run's key went with the run; each agent's token stays bound to it (an agent hears the end with it).
    const keys = await server.sql<{ agent_id: number | null }[]>`select agent_id from api_keys where test_run_id = ${runId}`;
    expect(keys.filter((key) => key.agent_id === null)).toHaveLength(0);
    expect(keys).toHaveLength(3);
    for (const execution of seen) {
      expect(execution.key).toMatch(/^prc_p_/);
      expect(execution.key).not.toBe(projectKey);
      expect(execution.database).toBeNull();
      expect(execution.agentSecret).toBeNull();
    }
  });

  it("when one agent runs the suite alone, then it runs its units in batches, one Playwright each (setup once per batch), each unit's shard holding its own file's results and ending with its own status", async () => {
    const agent = startAgent('build-batches', 'solo', { LOG_LEVEL: 'info' }, 'proctor-ci');
    const runId = await runOfKey('build-batches');
    expect(await agent.exited, agent.output()).toBe(0);
    const run = (await waitForRun(api, runId)).testRun;
    expect(run).toMatchObject({ state: 'failed', ...COUNTS, total_shards: 6 });
    const seen = executions();
    expect(attemptsPerTest(seen)).toEqual(EVERY_ATTEMPT_ONCE);
    // Fewer Playwright starts than units: the setup project ran once per batch, before each batch's tests.
    const setups = seen.filter((e) => e.title === SETUP).length;
    expect(setups).toBeGreaterThan(0);
    expect(setups).toBeLessThan(6);
    expect(seen.filter((e) => e.title !== SETUP).every((e) => (e as { setupFirst?: boolean }).setupFirst)).toBe(true);
    const entries = agent
      .output()
      .trim()
      .split('\n')
      .slice(0, -1)
      .map((line) => JSON.parse(line) as { msg: string; start_ms?: number });
    expect(entries.some((entry) => entry.msg === 'running units in one Playwright')).toBe(true);
    expect(entries.filter((entry) => entry.msg === "the units' Playwright ended").every((entry) => (entry.start_ms ?? -1) >= 0)).toBe(true);
    // Each result went to its unit's shard, the unit of its file (a unit's file is relative to the testDir); the setup's, which no unit names, to the batch's first.
    const misplaced = await server.sql<{ test_case_id: string }[]>`
      select r.test_case_id from test_results r
      join test_run_units u on u.test_run_id = r.test_run_id and u.unit = r.shard
      join test_runs run on run.id = r.test_run_id
      join test_cases c on c.project_id = run.project_id and c.id = r.test_case_id
      where r.test_run_id = ${runId} and c.runner_project <> 'setup' and not (c.file_path = u.file or c.file_path like '%/' || u.file)`;
    expect(misplaced).toEqual([]);
    const shards = await server.sql<{ status: string }[]>`select status from test_run_shards where test_run_id = ${runId}`;
    expect(shards).toHaveLength(6);
    expect(shards.every((shard) => shard.status !== 'crashed')).toBe(true);
    // Each unit's shard ends with its own tests' status, not its batch's: failed only where its own test failed.
    const statuses = await server.sql<{ shard: number; status: string; failing: boolean }[]>`
      select s.shard, s.status, exists (select 1 from test_results r where r.test_run_id = s.test_run_id and r.shard = s.shard and r.is_final and r.outcome = 'failed') as failing
      from test_run_shards s where s.test_run_id = ${runId} order by s.shard`;
    expect(statuses.filter((shard) => shard.failing)).toHaveLength(1);
    for (const shard of statuses) expect(shard.status, `shard ${shard.shard}`).toBe(shard.failing ? 'failed' : 'passed');
  });

  it('when an agent is killed in the middle of a unit, then another agent runs the unit and no result is lost or recorded twice', async () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    // The CI names the pull request's branch and the commit it built.
    git(repo, 'branch', '--force', 'feature/agents');
    const first = startAgent('build-killed', 'doomed', { SLOW_MS: '6000', GITHUB_RUN_ID: '31', GITHUB_HEAD_REF: 'feature/agents', GITHUB_SHA: head });
    const runId = await runOfKey('build-killed');
    // The slow unit is the longest by the first run's history (or, before its rollup, the last unknown one).
    let doomedUnit = 0;
    await waitUntil(
      async () => {
        const [row] = await server.sql<
          { unit: number }[]
        >`select unit from test_run_units where test_run_id = ${runId} and file = 'slow.spec.ts' and agent_id is not null`;
        doomedUnit = row?.unit ?? 0;
        return doomedUnit > 0 && fs.readdirSync(records).some((name) => name.startsWith('slow-started-'));
      },
      // One agent checks out, installs, lists and plans before the unit starts: minutes on a busy CI machine.
      240_000,
      'the slow unit under way',
    );
    const second = startAgent('build-killed', 'survivor', {}, 'proctor-ci');
    // The machine dies: the agent and every process it started.
    for (const pid of [first.child.pid as number, ...processesMarked(`agent-${first.child.pid}:${runId}:${doomedUnit}`)]) {
      try {
        process.kill(pid === first.child.pid ? -pid : pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    expect(await second.exited, second.output()).toBe(0);
    const run = (await waitForRun(api, runId)).testRun;
    expect(run).toMatchObject({ state: 'failed', ...COUNTS });
    expect(await revisionOf(runId)).toEqual({ test_run_branch: 'feature/agents', commit: head, test_run_head_sha: head });
    const [slow] = await server.sql<{ leases: number; agent: string }[]>`
      select u.leases, a.name as agent from test_run_units u join test_run_agents a on a.id = u.agent_id where u.test_run_id = ${runId} and u.unit = ${doomedUnit}`;
    expect(slow).toEqual({ leases: 2, agent: 'survivor' });
    const results = await server.sql<{ title: string; retries: number }[]>`
      select t.title, count(*)::int as retries from test_results r join test_run_tests t on t.test_run_id = r.test_run_id and t.test_case_id = r.test_case_id
      where r.test_run_id = ${runId} group by t.title`;
    expect(Object.fromEntries(results.map((r) => [r.title, r.retries]))).toEqual({ ...ATTEMPTS, [SETUP]: 1 });
    // The killed copy of the slow test never finished: the survivor's is its one execution.
    expect(attemptsPerTest(executions())['takes its time']).toEqual([0]);
  }, 420_000);
  it('when the run is cancelled, then every agent stops its Playwright within seconds (its check of the run each second) and exits 0', async () => {
    const started = [startAgent('build-cancelled', 'a', { SLOW_MS: '60000' }), startAgent('build-cancelled', 'b', { SLOW_MS: '60000' })];
    const runId = await runOfKey('build-cancelled');
    await waitUntil(() => fs.readdirSync(records).some((name) => name.startsWith('slow-started-')), 120_000, 'the slow unit under way');
    const slowPid = Number(
      fs
        .readdirSync(records)
        .find((name) => name.startsWith('slow-started-'))
        ?.slice('slow-started-'.length),
    );
    expect((await api.post(`/api/test-runs/${runId}/cancel`, { reason: 'enough' })).status).toBe(200);
    const codes = await Promise.all(started.map((agent) => agent.exited));
    expect(codes).toEqual([0, 0]);
    for (const agent of started) expect(agent.output()).toContain(`proctor agent: run ${runId} has ended (cancelled)`);
    // Gone, or a zombie its parent's death left to a reaper, within moments: a killed process is
    // still running (R) while the kernel takes it down, which takes a while on a busy machine.
    const stateOf = () => (fs.existsSync(`/proc/${slowPid}/stat`) ? fs.readFileSync(`/proc/${slowPid}/stat`, 'utf8').split(') ')[1]?.[0] : 'gone');
    await waitUntil(async () => ['gone', 'Z', 'X'].includes(stateOf() as string), 10_000, `the slow test's process ${slowPid} ended (state ${stateOf()})`);
    executions();
  });

  it.each(['proctor', 'proctor-ci'] as const)('when the key is refused, then `%s agent` exits 1 with the reason in one line', async (command) => {
    const agent = agentProcess(server.url, 'prc_p_wrong_key', ['--environment', 'ci', '--run-key', 'build-refused', '--workdir', workdir], {}, command);
    expect(await agent.exited).toBe(1);
    const lines = agent.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${command} agent: HTTP 401 from /api/test-runs/agent-run: invalid API key$`));
  });

  it.each(['proctor', 'proctor-ci'] as const)(
    'when `%s agent` is given a wrong command line, then it exits 2 with the reason and its usage',
    async (command) => {
      const agent = agentProcess(server.url, projectKey, ['--environment', 'ci', '--run', '12'], {}, command);
      expect(await agent.exited).toBe(2);
      expect(agent.output()).toContain(`${command} agent: give --run ID or --environment SLUG (one of them)`);
      expect(agent.output()).toContain('usage: proctor-ci agent');
    },
  );
});

describe("the server's executor as one more agent", () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let suite: { repo: string; records: string; key: string };

  beforeAll(async () => {
    server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_AGENT_LEASE_S: '3' } });
    suite = await suiteProject(server);
    api = client(server.url, suite.key);
  });
  afterAll(async () => {
    await server?.close();
    for (const dir of [suite?.repo, suite?.records]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('when a run for agents is triggered, then the server alone serves it, and a rerun of its failed tests, joined by a remote agent by its id, runs the failed test alone', async () => {
    const triggered = await api.put('/api/test-runs', { environment: 'ci', distribution: 'agents' });
    expect(triggered.status, triggered.text).toBe(200);
    const runId = triggered.body.data.test_run.id as number;
    const run = (await waitForRun(api, runId)).testRun;
    expect(run).toMatchObject({ state: 'failed', ...COUNTS, total_shards: 6 });
    expect(attemptsPerTest(executionsIn(suite.records))).toEqual(EVERY_ATTEMPT_ONCE);
    const served = await server.sql<
      { name: string }[]
    >`select distinct a.name from test_run_units u join test_run_agents a on a.id = u.agent_id where u.test_run_id = ${runId}`;
    expect(served.map((row) => row.name)).toEqual([expect.stringMatching(/^server /)]);

    const rerun = await api.put('/api/test-runs', { environment: 'ci', rerun_source_id: runId, rerun_only_failed: true });
    const rerunId = rerun.body.data.test_run.id as number;
    const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-agent-work-'));
    fs.chmodSync(workdir, 0o711);
    try {
      const remote = agentProcess(server.url, suite.key, ['--run', String(rerunId), '--name', 'remote', '--workdir', workdir]);
      expect(await remote.exited, remote.output()).toBe(0);
      const again = (await waitForRun(api, rerunId)).testRun;
      // The failed test, with the setup its project depends on.
      expect(again).toMatchObject({ state: 'failed', total_count: 2, failed_count: 1, total_shards: 1 });
      const ran = attemptsPerTest(executionsIn(suite.records));
      expect(Object.entries(ran).filter(([, retries]) => retries.length > 0)).toEqual([['fails every time', [0, 1]]]);
      const [row] = await server.sql<{ distribution: string }[]>`select distribution from test_runs where id = ${rerunId}`;
      expect(row?.distribution).toBe('agents');
    } finally {
      fs.rmSync(workdir, { recursive: true, force: true });
    }
  });
});
