import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireDueSchedules } from '../../server/src/executor/scheduler.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { createKey } from '../../server/src/auth/store.ts';
import { client } from '../helpers/http.ts';
import { EXAMPLES } from '../helpers/playwright.ts';
import { createTestRepository, type TestRepository } from '../helpers/repo.ts';
import { runProcesses, trigger, waitForRun, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let repo: TestRepository;
let demo: ReturnType<typeof client>;
let suite: ReturnType<typeof client>;
let suiteProjectId: number;
let other: ReturnType<typeof client>;

async function projectWithKey(name: string, repoUrl: string) {
  const project = await createProject(server.sql, { name, repoUrl, repoName: `acme/${name}` });
  return { projectId: project.id, api: client(server.url, await createKey(server.sql, { projectId: project.id })) };
}

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live'), env: { PROCTOR_EXECUTOR_CONCURRENCY: '2' } });
  repo = createTestRepository();
  const demoProject = await projectWithKey('demo', path.resolve(EXAMPLES));
  demo = demoProject.api;
  await seedEnvironment(server.sql, demoProject.projectId, 'local');
  const suiteProject = await projectWithKey('suite', repo.dir);
  suite = suiteProject.api;
  suiteProjectId = suiteProject.projectId;
  await suite.post('/api/environments', { name: 'CI', slug: 'ci' });
  await suite
    .post('/api/environments', { name: 'Off', slug: 'off' })
    .then((r) => suite.patch(`/api/environments/${r.body.data.environment.id}`, { is_disabled: true }));
  other = (await projectWithKey('other', repo.dir)).api;
  await other.post('/api/environments', { name: 'CI', slug: 'ci' });
});
afterAll(async () => {
  await server?.close();
  repo?.cleanup();
});

const EXPECTED_COUNTS = { total_count: 10, success_count: 4, failed_count: 2, flaky_count: 2, skipped_count: 2 };

describe('refusals', () => {
  it.each([
    [{ environment: 'nowhere' }, 404, 'body.environment'],
    [{ environment: 'off' }, 409, 'disabled'],
    [{ environment: 'ci', branch: 'main', build: { url: 'http://x' } }, 400, 'body.branch'],
    [{ environment: 'ci', rerun_only_failed: true }, 400, 'body.rerun_only_failed'],
    [{ environment: 'ci', project_id: 999_999 }, 403, 'body.project_id'],
    [{ environment: 'ci', total_shards: 0 }, 400, 'body.total_shards'],
    [{ environment: 'ci', total_shards: 51 }, 400, 'body.total_shards'],
    [{ environment: 'ci', total_shards: 1.5 }, 400, 'body.total_shards'],
    [{ environment: 'ci', metadata: { ok: 'x', n: 2, bad: true } }, 400, 'body.metadata.bad'],
    [{ environment: 'ci', metadata: { nested: { a: 1 } } }, 400, 'body.metadata.nested'],
    [{ environment: 'ci', environment_variables_overrides: [{ name: 'BAD NAME', value: 'x' }] }, 400, 'body.environment_variables_overrides.0.name'],
    [
      {
        environment: 'ci',
        environment_variables_overrides: [
          { name: 'A', value: '1' },
          { name: 'NODE_OPTIONS', value: '--import=data:,' },
        ],
      },
      400,
      'body.environment_variables_overrides.1.name: NODE_OPTIONS',
    ],
    [
      { environment: 'ci', environment_variables_overrides: [{ name: 'LD_PRELOAD', value: '/tmp/x.so' }] },
      400,
      'body.environment_variables_overrides.0.name: LD_PRELOAD',
    ],
    [{ environment: 'ci', environment_variables_overrides: [{ name: 'NODE_PATH', value: '/tmp' }] }, 400, 'NODE_PATH changes how a runtime loads code'],
    [
      { environment: 'ci', environment_variables_overrides: [{ name: 'PROCTOR_API_KEY', value: 'x' }] },
      400,
      'body.environment_variables_overrides.0.name: PROCTOR_API_KEY',
    ],
    [{ environment: 'ci', test_case_ids: ['nope'] }, 400, 'body.test_case_ids.0'],
    [{ environment: 'ci', rerun_source_id: 999_999 }, 404, 'body.rerun_source_id'],
    [{}, 400, 'body.environment'],
  ])('when the trigger body is %j, then it is a %i naming %s and no run is made', async (body, status, words) => {
    const before = (await suite.get('/api/test-runs')).body.pagination.total;
    const response = await suite.put('/api/test-runs', body);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ data: null, error: { message: expect.stringContaining(words) } });
    expect((await suite.get('/api/test-runs')).body.pagination.total).toBe(before);
  });

  it('when the rerun source is a run of another project, then it is a 404', async () => {
    const foreign = await trigger(other, { environment: 'ci', tags: ['quick'] });
    await waitForRun(other, foreign);
    const response = await suite.put('/api/test-runs', { environment: 'ci', rerun_source_id: foreign });
    expect(response.status).toBe(404);
  });
});

describe('the sample suite, triggered', () => {
  let firstRun: number;

  it('when a run is triggered with 2 shards, then the answer has the contract shape and the run ends failed with the right counts', async () => {
    const response = await demo.put('/api/test-runs', {
      environment: 'local',
      total_shards: 2,
      metadata: { release: '1.2.3', build: 42 },
      scm_actor: 'octocat',
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: { trigger: { success: true }, test_run: { id: expect.any(Number), state: 'pending', test_run_branch: null, created_at: expect.any(String) } },
    });
    firstRun = response.body.data.test_run.id;
    const run = await waitForRun(demo, firstRun);
    expect(run.testRun).toMatchObject({ state: 'failed', total_shards: 2, ...EXPECTED_COUNTS });
    expect(run.testRun.test_run_head_sha).toMatch(/^[0-9a-f]{40}$/);
    expect(run.testRun.duration).toBeGreaterThan(0);
    const shards = await server.sql`select shard, status from test_run_shards where test_run_id = ${firstRun} order by shard`;
    expect(shards.map((s) => s.shard)).toEqual([1, 2]);
    expect(await server.sql`select 1 from api_keys where test_run_id = ${firstRun}`).toHaveLength(0);
  });

  it('when the failing tests are snoozed, then the triggered run ends passed', async () => {
    const failing = (await waitForRun(demo, firstRun)).flattenedSummaryDetails
      .filter((d: { status: string }) => d.status === 'failed')
      .map((d: { test_case_id: string }) => d.test_case_id);
    const snooze = await demo.post('/api/snoozes', { test_ids: failing, snooze_until: new Date(Date.now() + 3_600_000).toISOString() });
    const run = await waitForRun(demo, await trigger(demo, { environment: 'local' }));
    expect(run.testRun).toMatchObject({ state: 'passed', ...EXPECTED_COUNTS });
    await demo.delete(`/api/snoozes/${snooze.body.data.snooze.id}`);
  });

  it('when only the failed tests are rerun, then just those run, in every runner project where they failed', async () => {
    const response = await demo.put('/api/test-runs', { environment: 'local', rerun_source_id: firstRun, rerun_only_failed: true });
    expect(response.status).toBe(200);
    const run = await waitForRun(demo, response.body.data.test_run.id);
    expect(run.testRun).toMatchObject({ state: 'failed', rerun_source_id: firstRun, total_count: 2, failed_count: 2 });
    expect(run.flattenedSummaryDetails.map((d: { title: string; runner_project: string }) => `${d.title}/${d.runner_project}`).sort()).toEqual([
      'greets a returning user/desktop',
      'greets a returning user/mobile',
    ]);
  });

  it('when the environment matches one runner project, then only that project runs', async () => {
    const created = await demo.post('/api/environments', { name: 'Desktop', slug: 'desktop-only', runner_projects_match: ['desktop'] });
    expect(created.status).toBe(201);
    const run = await waitForRun(demo, await trigger(demo, { environment: 'desktop-only' }));
    expect(run.testRun).toMatchObject({ state: 'failed', total_count: 5, success_count: 2, failed_count: 1, flaky_count: 1, skipped_count: 1 });
    expect(new Set(run.flattenedSummaryDetails.map((d: { runner_project: string }) => d.runner_project))).toEqual(new Set(['desktop']));
  });
});

describe('a repository made by the test', () => {
  it('when the environment is synced, then its runner projects, env files and the test inventory come from the repository', async () => {
    const environment = (await suite.get('/api/environments')).body.data.environments.find((e: { slug: string }) => e.slug === 'ci');
    const response = await suite.post(`/api/environments/${environment.id}/sync`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { success: true } });
    const synced = (await suite.get(`/api/environments/${environment.id}`)).body.data.environment;
    expect(synced).toMatchObject({ runner_projects: ['alpha', 'beta'], env_files: ['.env', '.env.staging'] });
    const tests = (await suite.get(`/api/test-cases/v2?project_id=${suiteProjectId}`)).body;
    expect(tests.pagination.total).toBe(8);
    expect(tests.data.test_cases.every((t: { first_seen_commit_sha: string }) => /^[0-9a-f]{40}$/.test(t.first_seen_commit_sha))).toBe(true);
  });

  it('when 20 syncs of one environment arrive at once, then they share one job and every one is answered 200 in time', async () => {
    const environment = (await suite.get('/api/environments')).body.data.environments.find((e: { slug: string }) => e.slug === 'ci');
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => suite.post(`/api/environments/${environment.id}/sync`)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    // One listing takes a few seconds; 20 of them one after another, or one left hanging, would not fit.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect((await suite.get(`/api/test-cases/v2?project_id=${suiteProjectId}`)).body.pagination.total).toBe(8);
  });

  it('when a run has tags, then only the tagged tests run', async () => {
    const run = await waitForRun(suite, await trigger(suite, { environment: 'ci', tags: ['@quick'] }));
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 2, success_count: 2 });
    expect(run.flattenedSummaryDetails.every((d: { title: string }) => d.title === 'adds numbers')).toBe(true);
  });

  it('when a run names test ids, then only those tests run', async () => {
    const inventory = (await suite.get(`/api/test-cases/v2?project_id=${suiteProjectId}&runner_project=beta&search=renders`)).body.data.test_cases;
    expect(inventory).toHaveLength(1);
    const run = await waitForRun(suite, await trigger(suite, { environment: 'ci', test_case_ids: [inventory[0].id] }));
    expect(run.testRun).toMatchObject({ state: 'passed', total_count: 1 });
    expect(run.flattenedSummaryDetails[0]).toMatchObject({ test_case_id: inventory[0].id, runner_project: 'beta', title: 'renders a page' });
  });

  it('when the environment ignores a runner project, then the others run', async () => {
    await suite.post('/api/environments', { name: 'No beta', slug: 'no-beta', runner_projects_ignore: ['beta'] });
    const run = await waitForRun(suite, await trigger(suite, { environment: 'no-beta', tags: ['quick'] }));
    expect(run.flattenedSummaryDetails.map((d: { runner_project: string }) => d.runner_project)).toEqual(['alpha']);
  });

  it('when a build is given, then its branch is run when the repository has it, and env files, overrides and the build URL reach the tests, run by an unprivileged user that sees nothing of the server', async () => {
    process.env.HOST_ONLY_SECRET = 'the server keeps this';
    const response = await suite.put('/api/test-runs', {
      environment: 'ci',
      build: { url: 'http://build.example.test/', branch: 'feature', commit: 'abc123', version: '7' },
      environment_variables_overrides: [
        { name: 'GREETING', value: 'from the override' },
        { name: 'CHECK_ENV', value: '1' },
        { name: 'SERVER_PID', value: String(process.pid) },
        ...(process.getuid?.() === 0 ? [{ name: 'EXPECT_UNPRIVILEGED', value: '1' }] : []),
      ],
      tags: ['env'],
    });
    expect(response.body.data.test_run.test_run_branch).toBe('feature');
    const run = await waitForRun(suite, response.body.data.test_run.id);
    expect(run.testRun).toMatchObject({
      state: 'passed',
      total_count: 2,
      success_count: 2,
      build_url: 'http://build.example.test/',
      build_branch: 'feature',
      commit: 'abc123',
    });
  });

  it('when the build branch or the branch asked for is one the repository lacks, then the default branch runs, the same rule for both', async () => {
    const fallback = await suite.put('/api/test-runs', { environment: 'ci', build: { branch: 'no-such-branch' }, tags: ['quick'] });
    expect(fallback.body.data.test_run.test_run_branch).toBe('main');
    const named = await suite.put('/api/test-runs', { environment: 'ci', branch: 'no-such-branch', tags: ['quick'] });
    expect(named.status).toBe(200);
    expect(named.body.data.test_run.test_run_branch).toBe('main');
    await waitForRun(suite, named.body.data.test_run.id);
    const explicit = await suite.put('/api/test-runs', { environment: 'ci', branch: 'feature', tags: ['quick'] });
    expect(explicit.body.data.test_run.test_run_branch).toBe('feature');
    await waitForRun(suite, fallback.body.data.test_run.id);
    await waitForRun(suite, explicit.body.data.test_run.id);
  });

  it('when a running run is cancelled, then its Playwright processes are gone, the reason is recorded, and a second cancel is a 412', async () => {
    const runId = await trigger(suite, { environment: 'ci', tags: ['slow'], environment_variables_overrides: [{ name: 'SLOW', value: '1' }] });
    await waitForRun(suite, runId, ['running']);
    await waitUntil(() => runProcesses(server.url, runId).length >= 3, 30_000, 'Playwright, its worker and the browser');
    const cancelled = await suite.post(`/api/test-runs/${runId}/cancel`, { reason: 'deploy rolled back' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ message: expect.stringContaining(`${runId}`) });
    await waitUntil(() => runProcesses(server.url, runId).length === 0, 15_000, 'no process of the run left');
    const run = (await suite.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'cancelled', cancel_reason: 'deploy rolled back' });
    const again = await suite.post(`/api/test-runs/${runId}/cancel`, {});
    expect(again.status).toBe(412);
    expect(again.body).toEqual({ data: null, error: { message: expect.any(String) } });
  });

  it('when the repository cannot be checked out, then the run ends error with the reason', async () => {
    const broken = await projectWithKey('broken', '/nonexistent/repository');
    await broken.api.post('/api/environments', { name: 'CI', slug: 'ci' });
    const run = await waitForRun(broken.api, await trigger(broken.api, { environment: 'ci' }));
    expect(run.testRun.state).toBe('error');
    expect(run.testRun.error_reason).toContain('/nonexistent/repository');
  });
});

describe('schedules', () => {
  it('when a schedule comes due under an injected clock, then one run is made per tick, even from two servers, and none for a disabled environment', async () => {
    const { projectId } = await projectWithKey('scheduled', repo.dir);
    const created = new Date('2026-03-01T09:58:00Z');
    const [every] = await server.sql<{ id: number }[]>`
      insert into environments (project_id, slug, name, scheduled_trigger, created_at) values (${projectId}, 'hourly', 'Hourly', '0 * * * *', ${created}) returning id`;
    await server.sql`
      insert into environments (project_id, slug, name, scheduled_trigger, is_disabled, created_at) values (${projectId}, 'disabled', 'Disabled', '* * * * *', true, ${created})`;
    const before = new Date('2026-03-01T09:59:30Z');
    expect(await fireDueSchedules(server.sql, before, 60_000)).toEqual([]);
    const due = new Date('2026-03-01T10:00:20Z');
    const [a, b] = await Promise.all([fireDueSchedules(server.sql, due, 60_000), fireDueSchedules(server.sql, due, 60_000)]);
    expect([...(a as number[]), ...(b as number[])]).toHaveLength(1);
    expect(await fireDueSchedules(server.sql, new Date('2026-03-01T10:00:50Z'), 60_000)).toEqual([]);
    const runs = await server.sql`select environment_id, origin, scheduled_for from test_runs where project_id = ${projectId}`;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ environment_id: every?.id, origin: 'schedule' });
    expect((runs[0]?.scheduled_for as Date).toISOString()).toBe('2026-03-01T10:00:00.000Z');
    const next = await fireDueSchedules(server.sql, new Date('2026-03-01T11:00:05Z'), 60_000);
    expect(next).toHaveLength(1);
    await server.sql`update test_runs set state = 'cancelled' where project_id = ${projectId} and state in ('pending', 'queued')`;
  });
});
