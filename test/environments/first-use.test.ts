import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../reporter/src/reporter/settings.ts';
import { describeDelivery, Uploader } from '../../reporter/src/reporter/uploader.ts';
import { createKey } from '../../server/src/auth/store.ts';
import { createSession } from '../../server/src/sessions/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { type TestDatabase, createTestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { EXAMPLES, ROOT } from '../helpers/playwright.ts';
import { proctorCi, spawnProctor } from '../helpers/process.ts';
import { seedProject, seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Environments on first use: a report, a JUnit upload or an agent naming an environment the project
// lacks makes it, audited with the key that did; a project's admin turns that off, and then the
// unknown environment is refused in one line. And a project without a test repository: it takes
// reports, refuses a trigger until it has one, and gets one later.

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-first-use-'));
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A project with its admin key and a `report` key, as the README has CI given. */
async function project() {
  const seeded = await seedProject(server.sql);
  const reportKey = await createKey(server.sql, { projectId: seeded.projectId }, 'report');
  return { ...seeded, admin: client(server.url, seeded.key), report: client(server.url, reportKey), reportKey };
}

/** The id a key is known by: prc_p_<ID>_<secret>. */
const keyIdOf = (key: string) => key.split('_')[2] as string;

async function environmentsOf(api: ReturnType<typeof client>) {
  return (await api.get('/api/environments')).body.data.environments as { id: number; slug: string; name: string }[];
}

async function madeEvents(api: ReturnType<typeof client>) {
  return (await api.get('/api/audit-events?action=environment.created')).body.data.events as {
    action: string;
    actor: { kind: string; id: string };
    target: string;
    after: { slug: string; name: string; made_on_first_use?: boolean };
  }[];
}

/** `proctor-ci upload junit` as a CI job runs it. */
async function uploadJunit(key: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = path.join(dir, 'unit.xml');
  fs.writeFileSync(
    file,
    '<testsuite name="unit"><testcase name="adds" classname="math" time="0.01"/><testcase name="subtracts" classname="math"/></testsuite>',
  );
  return proctorCi(['upload', 'junit', file, ...args], { url: server.url, key });
}

/** A shard reported through the API as the reporter reports it: report, begin, results, end. */
async function reportShard(api: ReturnType<typeof client>, environment: string, runKey: string): Promise<number> {
  const report = await api.post('/api/test-runs/report', { environment, run_key: runKey, total_shards: 1 });
  expect(report.status, report.text).toBe(200);
  const runId = report.body.data.test_run.id as number;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1)), listedTest(testId(2))], complete: true });
  expect((await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [attempt(testId(1)), attempt(testId(2))] })).status).toBe(200);
  expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed', errors: [] })).status).toBe(200);
  return runId;
}

describe('environments made on first use', () => {
  it('when a report names an environment the project lacks, then it is made (its slug as its name) and every result is stored in it', async () => {
    const { admin, report } = await project();
    const runId = await reportShard(report, 'staging', 'build-1');
    const run = (await admin.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'passed', environment_slug: 'staging', environment_name: 'staging', total_count: 2 });
    expect(await environmentsOf(admin)).toEqual([expect.objectContaining({ slug: 'staging', name: 'staging' })]);
    // The next build finds it: no second environment.
    await reportShard(report, 'staging', 'build-2');
    expect(await environmentsOf(admin)).toHaveLength(1);
  });

  it('when an environment is made on first use, then the audit trail names the key that reported', async () => {
    const { admin, report, reportKey } = await project();
    await reportShard(report, 'nightly', 'build-1');
    const [made] = await environmentsOf(admin);
    expect(await madeEvents(admin)).toEqual([
      expect.objectContaining({
        action: 'environment.created',
        actor: expect.objectContaining({ kind: 'key', id: keyIdOf(reportKey) }),
        target: `environment:${made?.id}`,
        after: expect.objectContaining({ slug: 'nightly', name: 'nightly', made_on_first_use: true }),
      }),
    ]);
  });

  it('when the shards of one build begin at once in a new environment, then one environment is made, audited once, with one run', async () => {
    const { admin, report } = await project();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => report.post('/api/test-runs/report', { environment: 'e2e', run_key: 'build-7', total_shards: 6 })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((answer) => answer.body.data.test_run.id)).size).toBe(1);
    expect(await environmentsOf(admin)).toEqual([expect.objectContaining({ slug: 'e2e' })]);
    expect(await madeEvents(admin)).toHaveLength(1);
  });

  it('when `proctor-ci upload junit --environment unit` names an environment the project lacks, then it is made and the upload stored, audited with the key', async () => {
    const { admin, reportKey } = await project();
    const upload = await uploadJunit(reportKey, ['--environment', 'unit', '--json']);
    expect(upload.code, upload.stderr).toBe(0);
    const runId = JSON.parse(upload.stdout).test_run.id as number;
    const run = (await admin.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    expect(run).toMatchObject({ state: 'passed', environment_slug: 'unit', total_count: 2, success_count: 2 });
    expect(await madeEvents(admin)).toEqual([expect.objectContaining({ actor: expect.objectContaining({ kind: 'key', id: keyIdOf(reportKey) }) })]);
  });

  it("when an upload that names a new environment is refused, then the environment goes with it (the upload's transaction)", async () => {
    const { admin, reportKey } = await project();
    const file = path.join(dir, 'broken.xml');
    fs.writeFileSync(file, '<testsuite><testcase name="a"');
    const child = spawn(process.execPath, [path.join(ROOT, 'reporter/dist/cli/main.js'), 'upload', 'junit', file, '--environment', 'broken'], {
      env: { PATH: process.env.PATH, PROCTOR_URL: server.url, PROCTOR_API_KEY: reportKey },
      stdio: 'ignore',
    });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
    expect(await environmentsOf(admin)).toEqual([]);
    expect(await madeEvents(admin)).toEqual([]);
  });

  it("when an agent's run names an environment the project lacks, then it is made, audited with the agent's key", async () => {
    const { admin, report, reportKey } = await project();
    const made = await report.post('/api/test-runs/agent-run', { environment: 'agents', run_key: 'build-1' });
    expect(made.status, made.text).toBe(200);
    const run = (await admin.get(`/api/test-runs/${made.body.data.test_run.id}`)).body.data.test_run.testRun;
    expect(run.environment_slug).toBe('agents');
    expect(await madeEvents(admin)).toEqual([expect.objectContaining({ actor: expect.objectContaining({ kind: 'key', id: keyIdOf(reportKey) }) })]);
  });

  it('when the slug is not one an environment may have, then the 400 names the field and says why; nothing is made', async () => {
    const { admin, report } = await project();
    const bad = await report.post('/api/test-runs/report', { environment: 'two words', total_shards: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('body.environment: must be URL-friendly: letters, digits, ".", "_" or "-", starting with a letter or digit');
    const agent = await report.post('/api/test-runs/agent-run', { environment: '-x', run_key: 'k' });
    expect(agent.status).toBe(400);
    expect(agent.body.error.message).toContain('body.environment: must be URL-friendly');
    expect(await environmentsOf(admin)).toEqual([]);
  });

  it('when a trigger names an environment the project lacks, then it is still a 404: a trigger runs what an environment configures', async () => {
    const { admin } = await project();
    const triggered = await admin.put('/api/test-runs', { environment: 'nowhere' });
    expect(triggered.status).toBe(404);
    expect(triggered.body.error.message).toBe('body.environment: no environment with slug "nowhere" in this project');
  });
});

describe('the project that says no: environments are made only by an admin', () => {
  const OFF_LINE =
    'no environment with slug "staging" in this project, and the project makes none on first use: an admin makes it (the Environments page, or POST /api/environments)';

  it('when an admin turns it off, then the setting reads back, a report key may not turn it on, and the change is audited', async () => {
    const { admin, report } = await project();
    expect((await admin.get('/api/project')).body.data.project.create_environments_on_first_use).toBe(true);
    const off = await admin.patch('/api/project', { create_environments_on_first_use: false });
    expect(off.status).toBe(200);
    expect(off.body.data.project.create_environments_on_first_use).toBe(false);
    expect((await report.patch('/api/project', { create_environments_on_first_use: true })).status).toBe(403);
    expect((await report.get('/api/project')).body.data.project.create_environments_on_first_use).toBe(false);
    const events = (await admin.get('/api/audit-events?action=project.updated')).body.data.events;
    expect(events).toEqual([
      expect.objectContaining({
        before: expect.objectContaining({ create_environments_on_first_use: true }),
        after: expect.objectContaining({ create_environments_on_first_use: false }),
      }),
    ]);
  });

  it('when an admin opens the Settings page, then it shows the setting and the repository, with the form that changes them', async () => {
    const { projectId, admin } = await project();
    await admin.patch('/api/project', { create_environments_on_first_use: false, repo_url: null });
    const person = await seedUser(server.sql, [projectId], { role: 'admin' });
    const { cookie } = await createSession(server.sql, person.userId, new Date());
    const page = await fetch(`${server.url}/projects/${projectId}/settings`, { headers: { cookie: `proctor_session=${cookie}` } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-api="PATCH /api/project"');
    expect(html).toContain('<option value="false" selected>made by an admin only</option>');
    expect(html).toContain('No test repository: the project receives reports, and a trigger is refused until one is set');
  });

  it('when it is off, then a report, an upload and an agent naming an unknown environment are refused in one line, and nothing is made', async () => {
    const { admin, report, reportKey } = await project();
    await admin.patch('/api/project', { create_environments_on_first_use: false });
    const refused = await report.post('/api/test-runs/report', { environment: 'staging', total_shards: 1 });
    expect(refused.status).toBe(404);
    expect(refused.body.error.message).toBe(`body.environment: ${OFF_LINE}`);
    const agent = await report.post('/api/test-runs/agent-run', { environment: 'staging', run_key: 'k' });
    expect(agent.status).toBe(404);
    expect(agent.body.error.message).toBe(`body.environment: ${OFF_LINE}`);
    const upload = await uploadJunit(reportKey, ['--environment', 'staging']);
    expect(upload.code).toBe(2);
    expect(upload.stderr.split(OFF_LINE)).toHaveLength(2);
    expect(upload.stderr.trim().split('\n')).toHaveLength(1);
    expect(await environmentsOf(admin)).toEqual([]);
    // One an admin made is reported into as before.
    expect((await admin.post('/api/environments', { name: 'Staging', slug: 'staging' })).status).toBe(201);
    await reportShard(report, 'staging', 'after');
  });

  it("when it is off and the reporter's run cannot start, then its last line says the reason once, not once per request", async () => {
    const { admin, reportKey } = await project();
    await admin.patch('/api/project', { create_environments_on_first_use: false });
    const resolved = resolveSettings(
      { url: server.url, apiKey: reportKey, flushIntervalMs: 5, batchSize: 2, maxAttempts: 1 },
      { PROCTOR_ENVIRONMENT: 'staging', PROCTOR_RUN_KEY: 'build-1', PROCTOR_COMMIT: 'a'.repeat(40), PROCTOR_BRANCH: 'main' },
    );
    if (!resolved.ok) throw new Error(resolved.reason);
    const uploader = new Uploader(resolved.settings);
    const tests = Array.from({ length: 7 }, (_, n) => testId(n + 1));
    uploader.start({ projectDir: EXAMPLES, tests: tests.map((id) => listedTest(id)), complete: true, shard: 1, totalShards: 1, startedAt: new Date() });
    for (const id of tests) uploader.add(attempt(id));
    const line = describeDelivery(await uploader.finish('passed', []));
    expect(line.startsWith('[proctor] 0/7 results delivered to no run; not delivered: could not start the run: HTTP 404')).toBe(true);
    expect(line.split(OFF_LINE)).toHaveLength(2);
    expect(line).toMatch(/\(\d+ later request\(s\) not sent\)$/);
    expect(line).not.toContain('\n');
  });
});

describe('a project without a test repository', () => {
  it('when an instance admin makes one without repo_url, then it receives reports, refuses a trigger and a sync with a 409 that says to set one, and triggers once one is set', async () => {
    const root = await createUser(server.sql, { email: `root${Date.now()}@example.com`, name: 'Root', picture: '', isAdmin: true });
    const instance = client(server.url, await createKey(server.sql, { userId: root }, 'admin'));
    const made = await instance.post('/api/projects', { name: 'Reports only' });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.project).toMatchObject({ name: 'Reports only', repo_url: null, repo_name: '', create_environments_on_first_use: true });
    const projectId = made.body.data.project.id as number;
    const admin = client(server.url, await createKey(server.sql, { projectId }, 'admin'));
    const report = client(server.url, await createKey(server.sql, { projectId }, 'report'));

    const runId = await reportShard(report, 'ci', 'build-1');
    expect((await admin.get(`/api/test-runs/${runId}`)).body.data.test_run).toMatchObject({
      project: { id: projectId, repo_name: '' },
      testRun: { state: 'passed', environment_slug: 'ci', total_count: 2 },
    });

    const triggered = await report.put('/api/test-runs', { environment: 'ci' });
    expect(triggered.status).toBe(409);
    expect(triggered.body.error.message).toMatch(
      /^the project has no test repository, so Proctor has nothing to run: set one first \(PATCH \/api\/project with repo_url/,
    );
    const [environment] = await environmentsOf(admin);
    const sync = await admin.post(`/api/environments/${environment?.id}/sync`);
    expect(sync.status).toBe(409);
    expect(sync.body.error).toContain('the project has no test repository');

    const set = await admin.patch('/api/project', { repo_url: EXAMPLES });
    expect(set.status).toBe(200);
    expect(set.body.data.project).toMatchObject({ repo_url: EXAMPLES, repo_name: 'server/examples' });
    const now = await report.put('/api/test-runs', { environment: 'ci' });
    expect(now.status, now.text).toBe(200);
    expect(now.body.data.test_run.state).toBe('pending');
    // And taken away again: reports only.
    expect((await admin.patch('/api/project', { repo_url: null })).body.data.project).toMatchObject({ repo_url: null, repo_name: '' });
    expect((await report.put('/api/test-runs', { environment: 'ci' })).status).toBe(409);
  });

  it('when the repository given is empty or the body names an unknown field, then the 400 names the field', async () => {
    const { admin } = await project();
    for (const [body, field] of [
      [{ repo_url: '' }, 'body.repo_url'],
      [{ create_environments_on_first_use: 'yes' }, 'body.create_environments_on_first_use'],
      [{ colour: 'red' }, 'body'],
    ] as const) {
      const answer = await admin.patch('/api/project', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.message).toContain(field);
    }
  });
});

describe('`proctor project create` without --repo', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('when a project is made without --repo, then it has no repository and the usage says what --repo is for', async () => {
    const run = spawnProctor(['project', 'create', '--name', 'Reports only'], { DATABASE_URL: db.url });
    expect(await run.exited, run.output()).toBe(0);
    const projectId = Number(run.output().trim());
    const [row] = await db.sql<{ repo_url: string | null; repo_name: string }[]>`select repo_url, repo_name from projects where id = ${projectId}`;
    expect(row).toEqual({ repo_url: null, repo_name: '' });
    const help = spawnProctor(['--help'], {});
    expect(await help.exited).toBe(0);
    expect(help.output()).toContain('project create --name N [--repo PATH|URL]');
    expect(help.output()).toContain('without --repo: reports only');
  }, 60_000);
});
