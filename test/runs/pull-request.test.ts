import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/index.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, startTestServer, type TestServer } from '../helpers/server.ts';

// The pull or merge request a reported run's CI build is for: the reporter reads its number from
// the CI's variables (test/reporter/ci.test.ts, test/e2e/reporter.test.ts), the run answers it, and
// the run's page links it where the project's repository is on a host that says how.

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

async function projectOf(repoUrl: string): Promise<ReturnType<typeof client>> {
  const project = await createProject(server.sql, { name: `shop ${repoUrl}`, repoUrl, repoName: 'acme/shop' });
  await seedEnvironment(server.sql, project.id, 'ci');
  return client(server.url, await createKey(server.sql, { projectId: project.id }));
}

async function reported(api: ReturnType<typeof client>, body: Record<string, unknown>) {
  const created = await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1, ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const run = (await api.get(`/api/test-runs/${created.body.data.test_run.id}`)).body.data.test_run.testRun;
  return { run, html: await (await fetch(run.summary_url)).text() };
}

describe("a run's pull or merge request", () => {
  it.each([
    ['https://github.com/acme/shop.git', 42, '<a href="https://github.com/acme/shop/pull/42" rel="noreferrer">pull request #42</a>'],
    ['https://gitlab.example.com/shop/web', 17, '<a href="https://gitlab.example.com/shop/web/-/merge_requests/17" rel="noreferrer">merge request !17</a>'],
    ['https://bitbucket.org/acme/shop/', 5, '<a href="https://bitbucket.org/acme/shop/pull-requests/5" rel="noreferrer">pull request #5</a>'],
  ])('when the project lives at %s and the reporter names request %i, then the run answers it and its page links it there', async (repoUrl, number, link) => {
    const { run, html } = await reported(await projectOf(repoUrl), { pull_request: number });
    expect(run.pull_request).toBe(number);
    expect(html).toContain(link);
  });

  it('when the repository is not a web address of a known host, then the page names the request without a link', async () => {
    const { run, html } = await reported(await projectOf('/srv/git/shop'), { pull_request: 9 });
    expect(run.pull_request).toBe(9);
    expect(html).toContain(' · pull request #9 · ');
    expect(html).not.toContain('/pull/9');
  });

  it('when a reporter names none (a build of a branch, or a reporter before 0.2.0), then the run has none and its page says nothing of one', async () => {
    const { run, html } = await reported(await projectOf('https://github.com/acme/shop'), {});
    expect(run.pull_request).toBeNull();
    expect(html).not.toContain('pull request');
  });

  it.each([0, -3, 1.5, 2 ** 31, '42'])('when the number is %j, then it is a 400 naming body.pull_request and no run is made', async (number) => {
    const api = await projectOf('https://github.com/acme/shop');
    const refused = await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1, pull_request: number });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^body\.pull_request: /);
    expect((await api.get('/api/test-runs?environment=ci')).body.data.test_runs).toEqual([]);
  });
});
