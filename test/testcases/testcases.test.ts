import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListedTest, upsertTestCases } from '../../server/src/testcases/store.ts';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;

function listed(n: number, overrides: Partial<ListedTest> = {}): ListedTest {
  return {
    id: testId(n),
    title: `test ${n}`,
    file_path: 'tests/home.spec.ts',
    suites: ['home page'],
    runner_project: 'desktop',
    tags: [],
    line: n,
    column: 3,
    ...overrides,
  };
}

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
  await upsertTestCases(
    server.sql,
    projectId,
    [
      listed(1, { title: 'shows the title', tags: ['@smoke'] }),
      listed(2, { title: 'counts clicks', tags: ['@smoke', '@cart'], runner_project: 'mobile' }),
      listed(3, { title: 'pays by card', file_path: 'tests/checkout/pay.spec.ts', suites: ['checkout', 'cards'], tags: ['@cart'] }),
    ],
    'aaa111',
    server.clock.read(),
  );
  await upsertTestCases(
    server.sql,
    projectId,
    [listed(4, { title: 'new one', file_path: 'tests/new.spec.ts' }), listed(1, { title: 'shows the title', tags: ['@smoke'] })],
    'bbb222',
    server.clock.read(),
  );
  await server.sql`update test_cases set is_active = false where project_id = ${projectId} and id = ${testId(2)}`;
  const otherProject = await seedProject(server.sql);
  await upsertTestCases(server.sql, otherProject.projectId, [listed(9)], 'ccc', server.clock.read());
});
afterAll(async () => server?.close());

const ids = async (query: string) => {
  const response = await api.get(`/api/test-cases/v2?project_id=${projectId}${query}`);
  expect(response.status).toBe(200);
  return response.body.data.test_cases.map((t: { id: string }) => t.id).sort();
};

describe('test case list v2', () => {
  it('when listed without filters, then only active tests of the project come, with every field', async () => {
    const response = await api.get(`/api/test-cases/v2?project_id=${projectId}`);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 100, total: 3, total_pages: 1 });
    const first = response.body.data.test_cases.find((t: { id: string }) => t.id === testId(1));
    expect(first).toEqual({
      id: testId(1),
      name: 'shows the title',
      file_path: 'tests/home.spec.ts',
      suites: ['home page'],
      runner_project: 'desktop',
      tags: ['@smoke'],
      owners: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
      first_seen_commit_sha: 'aaa111',
      last_seen_commit_sha: 'bbb222',
    });
  });

  it('when is_active is false, then inactive tests are included', async () => {
    expect(await ids('&is_active=false')).toEqual([testId(1), testId(2), testId(3), testId(4)]);
    expect((await api.get(`/api/test-cases/v2?project_id=${projectId}&is_active=maybe`)).status).toBe(400);
  });

  it('when filtering, then each filter narrows as the contract says', async () => {
    expect(await ids('&file_path=tests/checkout')).toEqual([testId(3)]);
    expect(await ids('&file_path=tests/%25')).toEqual([]);
    expect(await ids('&runner_project=desktop')).toEqual([testId(1), testId(3), testId(4)]);
    expect(await ids('&tags=smoke&is_active=false')).toEqual([testId(1), testId(2)]);
    expect(await ids('&tags=@cart,nothing&is_active=false')).toEqual([testId(2), testId(3)]);
    expect(await ids('&first_seen_commit_sha=bbb222')).toEqual([testId(4)]);
    expect(await ids('&last_seen_commit_sha=aaa111')).toEqual([testId(3)]);
    expect(await ids('&search=CARDS')).toEqual([testId(3)]);
    expect(await ids('&search=new.spec')).toEqual([testId(4)]);
    expect(await ids('&search=title')).toEqual([testId(1)]);
  });

  it('when paginating, then per_page and page apply and pages beyond the last are empty', async () => {
    const page = await api.get(`/api/test-cases/v2?project_id=${projectId}&per_page=2&page=2`);
    expect(page.body.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(page.body.data.test_cases).toHaveLength(1);
    expect((await api.get(`/api/test-cases/v2?project_id=${projectId}&page=3`)).body.data.test_cases).toEqual([]);
  });

  it('when project_id is missing or another project, then it is refused', async () => {
    const missing = await api.get('/api/test-cases/v2');
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('query.project_id');
    expect((await api.get(`/api/test-cases/v2?project_id=${projectId + 1}`)).status).toBe(403);
  });
});

describe('test case tags', () => {
  it('when tags are replaced, then they are returned with @ and later runs keep them', async () => {
    const response = await api.put(`/api/test-cases/${testId(3)}/tags`, { tags: ['payments', '@cart', 'payments'] });
    expect(response.status).toBe(200);
    expect(response.body.data.test_case.tags).toEqual(['@payments', '@cart']);
    await upsertTestCases(
      server.sql,
      projectId,
      [listed(3, { title: 'pays by card', file_path: 'tests/checkout/pay.spec.ts', tags: ['@cart'] })],
      'ddd',
      server.clock.read(),
    );
    expect(await ids('&tags=payments')).toEqual([testId(3)]);
  });

  it('when the test case is unknown or the tags invalid, then it is a 404 or a 400', async () => {
    expect((await api.put(`/api/test-cases/${testId(99)}/tags`, { tags: [] })).status).toBe(404);
    expect((await api.put('/api/test-cases/nope/tags', { tags: [] })).status).toBe(400);
    const bad = await api.put(`/api/test-cases/${testId(1)}/tags`, { tags: ['two words'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('body.tags.0');
  });
});

describe('a build that lists its tests again', () => {
  let own: Awaited<ReturnType<typeof seedProject>>;
  let ownApi: ReturnType<typeof client>;
  const home = (n: number, overrides: Partial<ListedTest> = {}) => listed(n, { file_path: 'tests/again.spec.ts', ...overrides });
  interface Seen {
    name: string;
    suites: string[];
    tags: string[];
    line: number | null;
    first: string | null;
    last: string | null;
    updated_at: string;
  }
  const seen = async (): Promise<Map<string, Seen>> => {
    const response = await ownApi.get(`/api/test-cases/v2?project_id=${own.projectId}&is_active=false`);
    expect(response.status).toBe(200);
    type Listed = {
      id: string;
      name: string;
      suites: string[];
      tags: string[];
      last_seen_commit_sha: string | null;
      first_seen_commit_sha: string | null;
      updated_at: string;
    };
    return new Map(
      response.body.data.test_cases.map((t: Listed) => [
        t.id,
        { name: t.name, suites: t.suites, tags: t.tags, first: t.first_seen_commit_sha, last: t.last_seen_commit_sha, updated_at: t.updated_at },
      ]),
    );
  };
  const build = async (tests: ListedTest[], commit: string | null) => {
    server.clock.advance(60_000);
    await upsertTestCases(server.sql, own.projectId, tests, commit, server.clock.read());
    return server.clock.read().toISOString();
  };

  beforeAll(async () => {
    own = await seedProject(server.sql);
    ownApi = client(server.url, own.key);
  });

  it('when a build repeats its tests unchanged, then each reads the new commit and time, and the filter finds them', async () => {
    await build([home(1), home(2)], 'c1');
    const second = await build([home(1), home(2)], 'c2');
    const tests = await seen();
    for (const n of [1, 2]) expect(tests.get(testId(n))).toMatchObject({ first: 'c1', last: 'c2', updated_at: second });
    const found = await ownApi.get(`/api/test-cases/v2?project_id=${own.projectId}&last_seen_commit_sha=c2`);
    expect(found.body.data.test_cases.map((t: { id: string }) => t.id).sort()).toEqual([testId(1), testId(2)]);
  });

  it('when a build lists some tests or has no commit, then only those advance and a missing commit keeps the last', async () => {
    const partial = await build([home(1)], 'c3');
    let tests = await seen();
    expect(tests.get(testId(1))).toMatchObject({ last: 'c3', updated_at: partial });
    expect(tests.get(testId(2))).toMatchObject({ last: 'c2' });
    expect((tests.get(testId(2))?.updated_at ?? '') < partial).toBe(true);
    const without = await build([home(1), home(2)], null);
    tests = await seen();
    expect(tests.get(testId(1))).toMatchObject({ last: 'c3', updated_at: without });
    expect(tests.get(testId(2))).toMatchObject({ last: 'c2', updated_at: without });
  });

  it('when a listed test changed, was inactive or has tags set by hand, then it reads as listed, active, its tags kept', async () => {
    await server.sql`update test_cases set is_active = false where project_id = ${own.projectId} and id = ${testId(1)}`;
    expect((await ownApi.put(`/api/test-cases/${testId(2)}/tags`, { tags: ['kept'] })).status).toBe(200);
    // Titles and lists with what an array's text form quotes: quotes, backslashes, commas, braces, NULL.
    const odd = 'says "hi", {braces} \\ back\\slash and NULL';
    await build([home(1, { title: odd, suites: ['a, b', 'NULL', ''], tags: ['@x"y'], line: null }), home(2, { tags: ['@listed'] })], 'c4');
    const tests = await seen();
    expect(tests.get(testId(1))).toMatchObject({ name: odd, suites: ['a, b', 'NULL', ''], tags: ['@x"y'], last: 'c4' });
    expect(tests.get(testId(2))).toMatchObject({ tags: ['@kept'], last: 'c4' });
    const active = (await ownApi.get(`/api/test-cases/v2?project_id=${own.projectId}`)).body.data.test_cases;
    expect(active.map((t: { id: string }) => t.id).sort()).toEqual([testId(1), testId(2)]);
  });
});

describe("a test's owners across listings", () => {
  it('when a report file lists a test the reporter gave owners, then it keeps them; when the reporter lists it with none, then it has none', async () => {
    const owners = async () =>
      (await api.get(`/api/test-cases/v2?project_id=${projectId}&search=owned`)).body.data.test_cases.map((t: { owners: string[] }) => t.owners);
    const now = server.clock.read();
    await upsertTestCases(server.sql, projectId, [listed(40, { title: 'owned test', owners: ['@acme/web'] })], 'c1', now);
    expect(await owners()).toEqual([['@acme/web']]);
    // A JUnit or JSON report, or a sync's listing, cannot know owners.
    await upsertTestCases(server.sql, projectId, [listed(40, { title: 'owned test' })], 'c2', now, { keepOwners: true });
    expect(await owners()).toEqual([['@acme/web']]);
    // The reporter's own listing says them all: none sent, none now (its CODEOWNERS line went away).
    await upsertTestCases(server.sql, projectId, [listed(40, { title: 'owned test' })], 'c3', now);
    expect(await owners()).toEqual([[]]);
  });
});
