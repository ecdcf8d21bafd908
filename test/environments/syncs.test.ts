import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

// A sync is a job that a request records and waits on; the checkout, install and listing run in
// the server's sync worker. Jobs "of another server" are rows written here by hand.
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
beforeAll(async () => {
  server = await startTestServer({ env: { PROCTOR_SYNC_WAIT_S: '0.5', PROCTOR_LOST_RUN_S: '30' } });
  const seeded = await seedProject(server.sql);
  projectId = seeded.projectId;
  api = client(server.url, seeded.key);
});
afterAll(async () => server?.close());

async function jobsOf(environmentId: number) {
  return server.sql<{ id: number; state: string; failure: string | null }[]>`
    select id, state, failure from environment_syncs where environment_id = ${environmentId} order by id`;
}

async function jobRunningElsewhere(environmentId: number, heartbeatAt: Date): Promise<number> {
  const [row] = await server.sql<{ id: number }[]>`
    insert into environment_syncs (project_id, environment_id, state, claimed_by, heartbeat_at, requested_at)
    values (${projectId}, ${environmentId}, 'running', 'another-server', ${heartbeatAt}, ${heartbeatAt}) returning id`;
  return (row as { id: number }).id;
}

describe('sync jobs', () => {
  it('when the job goes on past PROCTOR_SYNC_WAIT_S, then the sync answers 202 with success false and a second sync joins the same job', async () => {
    const environmentId = await seedEnvironment(server.sql, projectId, 'slow');
    const jobId = await jobRunningElsewhere(environmentId, server.clock.now);
    const answers = await Promise.all([api.post(`/api/environments/${environmentId}/sync`), api.post(`/api/environments/${environmentId}/sync`)]);
    expect(answers.map((a) => [a.status, a.body])).toEqual([
      [202, { data: { success: false } }],
      [202, { data: { success: false } }],
    ]);
    expect(await jobsOf(environmentId)).toEqual([{ id: jobId, state: 'running', failure: null }]);
    const documented = (await api.get('/api/openapi.json')).body.paths['/api/environments/{id}/sync'].post.responses;
    expect(Object.keys(documented)).toEqual(expect.arrayContaining(['200', '202', '409']));
  });

  it('when the job it waits on ends within the bound, then the sync answers 200', async () => {
    const environmentId = await seedEnvironment(server.sql, projectId, 'finishing');
    const jobId = await jobRunningElsewhere(environmentId, server.clock.now);
    const answer = api.post(`/api/environments/${environmentId}/sync`);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await server.sql`update environment_syncs set state = 'done', finished_at = now() where id = ${jobId}`;
    expect((await answer).status).toBe(200);
    expect((await answer).body).toEqual({ data: { success: true } });
  });

  it('when the server running a job stopped beating, then this server takes the job over and runs it', async () => {
    const environmentId = await seedEnvironment(server.sql, projectId, 'orphaned');
    const jobId = await jobRunningElsewhere(environmentId, new Date(server.clock.now.getTime() - 3_600_000));
    // The sync worker polls: it finds the job without a request.
    const deadline = Date.now() + 10_000;
    let job: { state: string; failure: string | null; error: string | null; claimed_by: string } | undefined;
    while (Date.now() < deadline) {
      [job] = await server.sql<{ state: string; failure: string | null; error: string | null; claimed_by: string }[]>`
        select state, failure, error, claimed_by from environment_syncs where id = ${jobId}`;
      if (job?.state === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The seeded project's repository does not exist: the job ran here, and says so.
    expect(job).toMatchObject({ state: 'failed', failure: 'repository', error: expect.stringContaining('the repository /nonexistent does not exist') });
    expect(job?.claimed_by).not.toBe('another-server');
  });

  it('when a job has ended, then the next sync makes a job of its own', async () => {
    const environmentId = await seedEnvironment(server.sql, projectId, 'again');
    expect((await api.post(`/api/environments/${environmentId}/sync`)).status).toBe(409);
    expect((await api.post(`/api/environments/${environmentId}/sync`)).status).toBe(409);
    expect((await jobsOf(environmentId)).map((job) => job.state)).toEqual(['failed', 'failed']);
  });

  it("when another project's key asks for the sync, then it is a 404 and no job is made", async () => {
    const environmentId = await seedEnvironment(server.sql, projectId, 'private');
    const stranger = client(server.url, (await seedProject(server.sql)).key);
    expect((await stranger.post(`/api/environments/${environmentId}/sync`)).status).toBe(404);
    expect(await jobsOf(environmentId)).toEqual([]);
  });
});
