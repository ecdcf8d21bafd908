import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, seedRun, seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let projectId: number;
let environmentId: number;
let otherEnvironmentId: number;
const HOUR = 3_600_000;
const later = (ms: number) => new Date(server.clock.now.getTime() + ms).toISOString();

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
  const second = await seedProject(server.sql);
  other = client(server.url, second.key);
  environmentId = await seedEnvironment(server.sql, projectId, 'staging');
  otherEnvironmentId = await seedEnvironment(server.sql, second.projectId, 'staging');
});
afterAll(async () => server?.close());

describe('creating snoozes', () => {
  it('when a project key creates a snooze, then every field is returned and created_by is null whatever the body says', async () => {
    const runId = await seedRun(server.sql, projectId, environmentId);
    const response = await api.post('/api/snoozes', {
      test_ids: [testId(1), testId(2), testId(1)],
      snooze_until: later(HOUR),
      description: 'known flake',
      created_by: 'someone',
      scoped_to_environment_id: environmentId,
      created_from_test_run_id: String(runId),
    });
    expect(response.status).toBe(200);
    expect(response.body.data.snooze).toEqual({
      id: expect.any(Number),
      test_ids: [testId(1), testId(2)],
      snooze_until: expect.any(String),
      description: 'known flake',
      created_from_test_run_id: runId,
      created_by: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      scoped_to_environment_id: environmentId,
      source: 'user',
    });
  });

  it('when a personal key creates a snooze, then created_by is the user', async () => {
    const user = await seedUser(server.sql, [projectId]);
    const response = await client(server.url, user.key).post('/api/snoozes', { test_ids: [testId(3)], snooze_until: later(HOUR), created_by: 'x' });
    expect(response.body.data.snooze.created_by).toBe(user.userId);
    expect(response.body.data.snooze.scoped_to_environment_id).toBeNull();
    expect(response.body.data.snooze.description).toBeNull();
  });

  it.each([
    [{ snooze_until: 'LATER' }, 'body.test_ids'],
    [{ test_ids: [], snooze_until: 'LATER' }, 'body.test_ids'],
    [{ test_ids: ['short'], snooze_until: 'LATER' }, 'body.test_ids.0'],
    [{ test_ids: [`${testId(1)}0`], snooze_until: 'LATER' }, 'body.test_ids.0'],
    [{ test_ids: ['ID'] }, 'body.snooze_until'],
    [{ test_ids: ['ID'], snooze_until: 'tomorrow' }, 'body.snooze_until'],
    [{ test_ids: ['ID'], snooze_until: 'PAST' }, 'body.snooze_until'],
    [{ test_ids: ['ID'], snooze_until: 'LATER', created_from_test_run_id: 'abc' }, 'body.created_from_test_run_id'],
    [{ test_ids: ['ID'], snooze_until: 'LATER', scoped_to_environment_id: '1' }, 'body.scoped_to_environment_id'],
    [{ test_ids: ['ID'], snooze_until: 'LATER', project_id: 1 }, 'body'],
  ])('when the body is %j, then the 400 names %s', async (template, field) => {
    const body = JSON.parse(
      JSON.stringify(template)
        .replace('"LATER"', JSON.stringify(later(HOUR)))
        .replace('"PAST"', JSON.stringify(later(-HOUR)))
        .replace('"ID"', JSON.stringify(testId(9))),
    );
    const response = await api.post('/api/snoozes', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ data: null, error: { message: expect.stringContaining(field) } });
  });

  it('when the environment or the source run belongs to another project, then it is a 404', async () => {
    const scoped = await api.post('/api/snoozes', { test_ids: [testId(1)], snooze_until: later(HOUR), scoped_to_environment_id: otherEnvironmentId });
    expect(scoped.status).toBe(404);
    const [otherProject] = await server.sql`select project_id from environments where id = ${otherEnvironmentId}`;
    const foreignRun = await seedRun(server.sql, otherProject?.project_id, otherEnvironmentId);
    const fromRun = await api.post('/api/snoozes', { test_ids: [testId(1)], snooze_until: later(HOUR), created_from_test_run_id: foreignRun });
    expect(fromRun.status).toBe(404);
  });
});

describe('listing and expiry', () => {
  it('when time passes snooze_until, then the snooze moves from active to expired', async () => {
    const project = await seedProject(server.sql);
    const mine = client(server.url, project.key);
    const created = (await mine.post('/api/snoozes', { test_ids: [testId(5)], snooze_until: later(10 * 60_000) })).body.data.snooze;
    const ids = async (status?: string) =>
      (await mine.get(`/api/snoozes${status ? `?status=${status}` : ''}`)).body.data.snoozes.map((s: { id: number }) => s.id);
    expect(await ids()).toEqual([created.id]);
    expect(await ids('expired')).toEqual([]);
    server.clock.advance(10 * 60_000 + 1);
    expect(await ids()).toEqual([]);
    expect(await ids('active')).toEqual([]);
    expect(await ids('expired')).toEqual([created.id]);
    expect(await ids('all')).toEqual([created.id]);
  });

  it('when filtering by environment, then snoozes scoped to it and to all environments are returned', async () => {
    const project = await seedProject(server.sql);
    const mine = client(server.url, project.key);
    const envA = await seedEnvironment(server.sql, project.projectId, 'a');
    const envB = await seedEnvironment(server.sql, project.projectId, 'b');
    const all = (await mine.post('/api/snoozes', { test_ids: [testId(1)], snooze_until: later(HOUR) })).body.data.snooze.id;
    const onA = (await mine.post('/api/snoozes', { test_ids: [testId(2)], snooze_until: later(HOUR), scoped_to_environment_id: envA })).body.data.snooze.id;
    const onB = (await mine.post('/api/snoozes', { test_ids: [testId(3)], snooze_until: later(HOUR), scoped_to_environment_id: envB })).body.data.snooze.id;
    const forA = (await mine.get(`/api/snoozes?environment_id=${envA}`)).body.data.snoozes.map((s: { id: number }) => s.id);
    expect(forA.sort()).toEqual([all, onA].sort());
    const everything = (await mine.get('/api/snoozes')).body.data.snoozes.map((s: { id: number }) => s.id);
    expect(everything.sort()).toEqual([all, onA, onB].sort());
    // By slug, as the reporter knows its environment.
    const bySlug = (await mine.get('/api/snoozes?environment=a')).body.data.snoozes.map((s: { id: number }) => s.id);
    expect(bySlug.sort()).toEqual([all, onA].sort());
    const unknown = await mine.get('/api/snoozes?environment=nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('query.environment');
    expect((await mine.get(`/api/snoozes?environment=a&environment_id=${envA}`)).status).toBe(400);
  });

  it('when listing, then per_page defaults to 20 and pagination follows the contract', async () => {
    const project = await seedProject(server.sql);
    const mine = client(server.url, project.key);
    for (let i = 0; i < 23; i++) await mine.post('/api/snoozes', { test_ids: [testId(i)], snooze_until: later(HOUR) });
    const first = await mine.get('/api/snoozes');
    expect(first.body.data.snoozes).toHaveLength(20);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 20, total: 23, total_pages: 2 });
    expect((await mine.get('/api/snoozes?page=2')).body.data.snoozes).toHaveLength(3);
    expect((await mine.get('/api/snoozes?page=3')).body.data.snoozes).toEqual([]);
    const bad = await mine.get('/api/snoozes?status=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('query.status');
  });
});

describe('updating and deleting', () => {
  async function fresh() {
    return (await api.post('/api/snoozes', { test_ids: [testId(7)], snooze_until: later(HOUR), description: 'why', scoped_to_environment_id: environmentId }))
      .body.data.snooze;
  }

  it('when expire_now is true, then the snooze is expired at once', async () => {
    const snooze = await fresh();
    const response = await api.patch(`/api/snoozes/${snooze.id}`, { expire_now: true });
    expect(response.status).toBe(200);
    expect(new Date(response.body.data.snooze.snooze_until).getTime()).toBe(server.clock.now.getTime());
    const active = (await api.get('/api/snoozes?status=active')).body.data.snoozes.map((s: { id: number }) => s.id);
    expect(active).not.toContain(snooze.id);
  });

  it('when description and scope are set to null, then the description clears and the scope is all environments', async () => {
    const snooze = await fresh();
    const response = await api.patch(`/api/snoozes/${snooze.id}`, { description: null, scoped_to_environment_id: null });
    expect(response.body.data.snooze).toMatchObject({ description: null, scoped_to_environment_id: null });
  });

  it('when test_ids and snooze_until are patched, then the set is replaced and the time moved', async () => {
    const snooze = await fresh();
    const until = later(2 * HOUR);
    const response = await api.patch(`/api/snoozes/${snooze.id}`, { test_ids: [testId(8), testId(8), testId(9)], snooze_until: until });
    expect(response.body.data.snooze.test_ids).toEqual([testId(8), testId(9)]);
    expect(new Date(response.body.data.snooze.snooze_until).toISOString()).toBe(until);
    expect((await api.patch(`/api/snoozes/${snooze.id}`, { test_ids: [] })).status).toBe(400);
    expect((await api.patch(`/api/snoozes/${snooze.id}`, { expire_now: 'yes' })).status).toBe(400);
  });

  it('when a patch expires and moves the end at once, ends it in the past or scopes it to another project, then it is refused and the snooze unchanged', async () => {
    const snooze = await fresh();
    const both = await api.patch(`/api/snoozes/${snooze.id}`, { expire_now: true, snooze_until: later(2 * HOUR) });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ data: null, error: { message: 'body.expire_now: cannot be combined with snooze_until' } });
    const past = await api.patch(`/api/snoozes/${snooze.id}`, { snooze_until: later(-HOUR) });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toBe('body.snooze_until: must be in the future');
    const foreign = await api.patch(`/api/snoozes/${snooze.id}`, { scoped_to_environment_id: otherEnvironmentId });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message).toBe(`body.scoped_to_environment_id: environment ${otherEnvironmentId} not found`);
    const [now] = (await api.get('/api/snoozes?status=all')).body.data.snoozes.filter((s: { id: number }) => s.id === snooze.id);
    expect(now).toEqual(snooze);
  });

  it('when test ids are added, then they join the set without duplicates', async () => {
    const snooze = await fresh();
    const response = await api.post(`/api/snoozes/${snooze.id}/test-ids`, { test_ids: [testId(7), testId(10), testId(10)] });
    expect(response.status).toBe(200);
    expect(response.body.data.snooze.test_ids.sort()).toEqual([testId(7), testId(10)].sort());
  });

  it('when a snooze is deleted, then the deleted snooze is returned and it is gone for good', async () => {
    const snooze = await fresh();
    const response = await api.delete(`/api/snoozes/${snooze.id}`);
    expect(response.status).toBe(200);
    expect(response.body.data.snooze.id).toBe(snooze.id);
    expect((await api.get('/api/snoozes?status=all')).body.data.snoozes.map((s: { id: number }) => s.id)).not.toContain(snooze.id);
    expect((await api.delete(`/api/snoozes/${snooze.id}`)).status).toBe(404);
  });

  it('when another project patches, extends or deletes a snooze, then it is a 404', async () => {
    const snooze = await fresh();
    expect((await other.patch(`/api/snoozes/${snooze.id}`, { expire_now: true })).status).toBe(404);
    expect((await other.post(`/api/snoozes/${snooze.id}/test-ids`, { test_ids: [testId(1)] })).status).toBe(404);
    expect((await other.delete(`/api/snoozes/${snooze.id}`)).status).toBe(404);
    expect((await api.patch(`/api/snoozes/abc`, { expire_now: true })).status).toBe(400);
  });
});
