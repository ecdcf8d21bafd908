import { attempt, listedTest } from '../helpers/attempts.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createRunKey, findKey } from '../../server/src/auth/store.ts';
import { parseKey } from '../../server/src/auth/keys.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedEnvironment, seedProject, seedRun, seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let projectId: number;
let environmentId: number;
let admin: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  admin = client(server.url, project.key);
  environmentId = await seedEnvironment(server.sql, projectId, 'ci');
});
afterAll(async () => server?.close());

const as = async (scope: 'read' | 'report' | 'admin') => client(server.url, await createKey(server.sql, { projectId }, scope));

describe('key scopes', () => {
  it("when a report key (a CI reporter's) deletes an environment or sets the retention policy, then it is a 403 naming the operation and the scope it lacks, and nothing changes", async () => {
    const reporter = await as('report');
    const deleted = await reporter.delete(`/api/environments/${environmentId}`);
    expect(deleted.status).toBe(403);
    expect(deleted.body).toEqual({
      data: null,
      error: { message: 'DELETE /api/environments/{id} needs the role admin (a key of scope admin); this request comes with a project key of scope report' },
    });
    expect((await reporter.put('/api/retention-policy', { results_days: 1 })).status).toBe(403);
    expect((await admin.get(`/api/environments/${environmentId}`)).status).toBe(200);
  });

  it('when a report key reports a run, then it may: start it, send results, end it, and read it back', async () => {
    const reporter = await as('report');
    const started = await reporter.post('/api/test-runs/report', { environment: 'ci', total_shards: 1 });
    expect(started.status).toBe(200);
    const runId = started.body.data.test_run.id;
    expect((await reporter.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1))], complete: true })).status).toBe(200);
    expect((await reporter.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [attempt(testId(1))] })).status).toBe(200);
    expect((await reporter.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'passed', errors: [] })).status).toBe(200);
    expect((await reporter.get(`/api/test-runs/${runId}`)).status).toBe(200);
  });

  it('when a read key reads, then it may; when it reports, then it is a 403', async () => {
    const reader = await as('read');
    expect((await reader.get('/api/environments')).status).toBe(200);
    expect((await reader.get('/api/test-runs')).status).toBe(200);
    const refused = await reader.post('/api/test-runs/report', { environment: 'ci' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('POST /api/test-runs/report needs the role member (a key of scope report)');
  });

  it("when the executor makes a run's key, then its scope is report", async () => {
    const runKey = await createRunKey(server.sql, projectId, await seedRun(server.sql, projectId, environmentId));
    expect((await findKey(server.sql, parseKey(runKey)?.id as string))?.scope).toBe('report');
  });

  it('when the OpenAPI document is read, then each operation says the role it needs', async () => {
    const document = (await admin.get('/api/openapi.json')).body;
    expect(document.paths['/api/environments/{id}'].delete.summary).toContain('(role: admin)');
    expect(document.paths['/api/environments/{id}'].delete['x-proctor-role']).toBe('admin');
    expect(document.paths['/api/test-runs/{id}/results'].post.summary).toContain("(role: member; also the run's own key)");
    expect(document.paths['/api/environments'].get.summary).toContain('(role: viewer)');
  });
});

describe('keys and members over the API', () => {
  it('when an admin creates, lists and revokes a key, then the list shows no secret and the revoked key stops at once', async () => {
    const created = await admin.post('/api/keys', { scope: 'report' });
    expect(created.status).toBe(201);
    const { key: plain, id } = created.body.data.key;
    expect(created.body.data.key).toMatchObject({ kind: 'project', scope: 'report', test_run_id: null });
    const secret = plain.split('_').at(-1);
    const listed = await admin.get('/api/keys');
    expect(listed.body.data.keys.map((k: { id: string }) => k.id)).toContain(id);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const reporter = client(server.url, plain);
    expect((await reporter.get('/api/environments')).status).toBe(200);
    expect((await admin.delete(`/api/keys/${id}`)).body).toEqual({ data: { success: true } });
    expect((await reporter.get('/api/environments')).status).toBe(401);
    expect((await admin.delete(`/api/keys/${id}`)).status).toBe(404);
  });

  it('when a key is made with a name, then the name is stored trimmed and listed; without one it is null; a blank or long one is refused', async () => {
    const named = await admin.post('/api/keys', { scope: 'report', name: '  CI on main  ' });
    expect(named.status).toBe(201);
    expect(named.body.data.key.name).toBe('CI on main');
    const unnamed = (await admin.post('/api/keys', { scope: 'read' })).body.data.key;
    expect(unnamed.name).toBeNull();
    const listed = new Map((await admin.get('/api/keys')).body.data.keys.map((k: { id: string; name: string | null }) => [k.id, k.name]));
    expect(listed.get(named.body.data.key.id)).toBe('CI on main');
    expect(listed.get(unnamed.id)).toBeNull();
    const [stored] = await server.sql<{ name: string | null }[]>`select name from api_keys where id = ${named.body.data.key.id}`;
    expect(stored?.name).toBe('CI on main');
    const blank = await admin.post('/api/keys', { scope: 'read', name: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.error.message).toContain('name');
    expect((await admin.post('/api/keys', { scope: 'read', name: 'x'.repeat(101) })).status).toBe(400);
    expect((await admin.post('/api/keys', { scope: 'read', name: 'x'.repeat(100) })).status).toBe(201);
  });

  it("when a non-admin key lists keys or another project revokes this one's, then it is refused", async () => {
    expect((await (await as('report')).get('/api/keys')).status).toBe(403);
    const target = (await admin.post('/api/keys', { scope: 'read' })).body.data.key.id;
    const stranger = client(server.url, (await seedProject(server.sql)).key);
    expect((await stranger.delete(`/api/keys/${target}`)).status).toBe(404);
  });

  it("when an admin removes a member, then the user's personal key no longer reaches the project", async () => {
    const { userId, key } = await seedUser(server.sql, [projectId], { role: 'member' });
    const member = client(server.url, key, { 'x-project-id': String(projectId) });
    expect((await member.get('/api/environments')).status).toBe(200);
    expect((await admin.delete(`/api/members/${userId}`)).body).toEqual({ data: { success: true } });
    expect((await member.get('/api/environments')).status).toBe(403);
    expect((await admin.delete(`/api/members/${userId}`)).status).toBe(404);
  });
});

describe('keys and members from the command line', () => {
  const cli = async (...args: string[]) => {
    const run = spawnProctor(args, { DATABASE_URL: server.db.url });
    const code = await run.exited;
    return { code, output: run.output().trim() };
  };

  it('when a key is made with a scope, listed and revoked, and a member removed, then each command says so and it holds', async () => {
    const made = await cli('key', 'create', '--project', String(projectId), '--scope', 'read');
    expect(made.code).toBe(0);
    const id = parseKey(made.output)?.id as string;
    expect((await findKey(server.sql, id))?.scope).toBe('read');
    const listed = await cli('key', 'list', '--project', String(projectId));
    expect(listed.output).toMatch(new RegExp(`^${id}\\tread\\t\\d{4}-`, 'm'));
    expect(listed.output).not.toContain(made.output.split('_').at(-1));
    expect(await cli('key', 'revoke', '--key', made.output)).toEqual({ code: 0, output: 'revoked' });
    expect(await findKey(server.sql, id)).toBeNull();
    expect((await cli('key', 'create', '--project', String(projectId), '--scope', 'root')).code).toBe(2);
    const named = await cli('key', 'create', '--project', String(projectId), '--scope', 'report', '--name', ' Nightly CI ');
    expect(named.code).toBe(0);
    const namedId = parseKey(named.output)?.id as string;
    expect((await admin.get('/api/keys')).body.data.keys.find((k: { id: string }) => k.id === namedId)?.name).toBe('Nightly CI');
    expect((await cli('key', 'list', '--project', String(projectId))).output).toMatch(new RegExp(`^${namedId}\\treport\\t\\S+\\tNightly CI$`, 'm'));
    expect((await cli('key', 'create', '--project', String(projectId), '--name', ' ')).code).toBe(2);
    const { userId } = await seedUser(server.sql, [projectId], { role: 'member' });
    expect(await cli('member', 'remove', '--project', String(projectId), '--user', userId)).toEqual({ code: 0, output: 'ok' });
    expect(await cli('member', 'remove', '--project', String(projectId), '--user', userId)).toEqual({ code: 1, output: 'proctor: member not found' });
  });
});
