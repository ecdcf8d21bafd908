import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url, (await seedProject(server.sql)).key);
  other = client(server.url, (await seedProject(server.sql)).key);
});
afterAll(async () => server?.close());

describe('environments', () => {
  it('when an environment is created, then it is a 201 with every field of the contract and defaults', async () => {
    const response = await api.post('/api/environments', { name: 'Staging', slug: 'staging' });
    expect(response.status).toBe(201);
    expect(response.body.data.environment).toEqual({
      id: expect.any(Number),
      project_id: expect.any(Number),
      slug: 'staging',
      name: 'Staging',
      runner_projects_match: [],
      runner_projects_ignore: [],
      is_disabled: null,
      env_files: [],
      runner_projects: [],
      scheduled_trigger: null,
      burn_in_repeats: 0,
      playwright_args: [],
      max_failures: null,
      order_strategy: 'duration',
      full_run_every: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('when the slug is taken in the project, then it is a 409 in the flat error shape; another project may use it', async () => {
    await api.post('/api/environments', { name: 'Prod', slug: 'prod' });
    const again = await api.post('/api/environments', { name: 'Prod 2', slug: 'prod' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.stringContaining('slug') });
    expect((await other.post('/api/environments', { name: 'Prod', slug: 'prod' })).status).toBe(201);
  });

  it.each([
    [{ name: '', slug: 'a' }, 'body.name'],
    [{ name: 'a', slug: '' }, 'body.slug'],
    [{ slug: 'a' }, 'body.name'],
    [{ name: 'a' }, 'body.slug'],
    [{ name: 'a', slug: 'has space' }, 'body.slug'],
    [{ name: 'a', slug: 'b', runner_projects_match: ['!mobile'] }, 'body.runner_projects_match.0'],
    [{ name: 'a', slug: 'b', scheduled_trigger: 'every day' }, 'body.scheduled_trigger'],
    [{ name: 'a', slug: 'b', scheduled_trigger: '61 * * * *' }, 'body.scheduled_trigger'],
    [{ name: 'a', slug: 'b', colour: 'red' }, 'body'],
  ])('when the create body is %j, then the 400 names %s', async (body, field) => {
    const response = await api.post('/api/environments', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.stringContaining(field) });
  });

  it('when the name and slug are one character and the cron valid, then it is accepted', async () => {
    const response = await api.post('/api/environments', {
      name: 'x',
      slug: 'x',
      runner_projects_match: ['desktop'],
      runner_projects_ignore: ['!odd-but-allowed'],
      scheduled_trigger: '0 6 * * 1-5',
    });
    expect(response.status).toBe(201);
    expect(response.body.data.environment.scheduled_trigger).toBe('0 6 * * 1-5');
  });

  it('when an environment is updated, then each optional field changes alone and a null trigger clears', async () => {
    const created = (await api.post('/api/environments', { name: 'QA', slug: 'qa', scheduled_trigger: '*/5 * * * *' })).body.data.environment;
    const renamed = await api.patch(`/api/environments/${created.id}`, { name: 'QA env' });
    expect(renamed.body.data.environment).toMatchObject({ name: 'QA env', slug: 'qa', scheduled_trigger: '*/5 * * * *' });
    const disabled = await api.patch(`/api/environments/${created.id}`, { is_disabled: true, scheduled_trigger: null, runner_projects_ignore: ['mobile'] });
    expect(disabled.body.data.environment).toMatchObject({ is_disabled: true, scheduled_trigger: null, runner_projects_ignore: ['mobile'] });
    const refused = await api.patch(`/api/environments/${created.id}`, { runner_projects_match: ['!x'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('body.runner_projects_match.0');
    const clash = await api.patch(`/api/environments/${created.id}`, { slug: 'staging' });
    expect(clash.status).toBe(409);
  });

  it('when environments are listed, then they are paginated and pages beyond the last are empty', async () => {
    const list = await api.get('/api/environments?per_page=2&page=1');
    expect(list.status).toBe(200);
    expect(list.body.data.environments).toHaveLength(2);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 2, total: expect.any(Number), total_pages: Math.ceil(list.body.pagination.total / 2) });
    const beyond = await api.get('/api/environments?page=99');
    expect(beyond.status).toBe(200);
    expect(beyond.body.data.environments).toEqual([]);
    expect((await api.get('/api/environments?per_page=101')).status).toBe(400);
    expect((await api.get('/api/environments?per_page=0')).status).toBe(400);
  });

  it('when an environment is deleted, then success is at the top level and it is gone', async () => {
    const created = (await api.post('/api/environments', { name: 'Gone', slug: 'gone' })).body.data.environment;
    expect((await other.delete(`/api/environments/${created.id}`)).status).toBe(404);
    const deleted = await api.delete(`/api/environments/${created.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await api.get(`/api/environments/${created.id}`)).status).toBe(404);
    expect((await api.get(`/api/environments/${created.id}`)).body).toEqual({ error: 'environment not found' });
  });

  it('when another project reads, updates or deletes an environment, then it is a 404', async () => {
    const created = (await api.post('/api/environments', { name: 'Mine', slug: 'mine' })).body.data.environment;
    expect((await other.get(`/api/environments/${created.id}`)).status).toBe(404);
    expect((await other.patch(`/api/environments/${created.id}`, { name: 'Theirs' })).status).toBe(404);
    expect((await other.delete(`/api/environments/${created.id}`)).status).toBe(404);
  });

  it("when the project's test repository cannot be read, then a sync is a 409 that says why", async () => {
    const created = (await api.post('/api/environments', { name: 'Unreadable', slug: 'unreadable' })).body.data.environment;
    const synced = await api.post(`/api/environments/${created.id}/sync`);
    expect(synced.status).toBe(409);
    expect(synced.body.error).toContain('the test repository could not be read: the repository /nonexistent does not exist');
  });
});
