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
  const checkout = (n: number) => listed(n, { file_path: 'tests/again-checkout.spec.ts' });
  /** Each row's version (xmin): a row rewritten has a new one. */
  const versions = async () =>
    new Map(
      (await server.sql<{ id: string; v: string }[]>`select id, xmin::text as v from test_cases where project_id = ${own.projectId}`).map((row) => [
        row.id,
        row.v,
      ]),
    );
  interface Seen {
    name: string;
    first: string | null;
    last: string | null;
    updated_at: string;
  }
  const seen = async (): Promise<Map<string, Seen>> => {
    const response = await ownApi.get(`/api/test-cases/v2?project_id=${own.projectId}&is_active=false`);
    expect(response.status).toBe(200);
    return new Map(
      response.body.data.test_cases.map(
        (t: { id: string; name: string; last_seen_commit_sha: string | null; first_seen_commit_sha: string | null; updated_at: string }) => [
          t.id,
          { name: t.name, first: t.first_seen_commit_sha, last: t.last_seen_commit_sha, updated_at: t.updated_at },
        ],
      ),
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

  it('when a build repeats its tests unchanged, then no row is rewritten and each reads the new commit and time', async () => {
    await build([home(1), home(2), checkout(3)], 'c1');
    const before = await versions();
    const second = await build([home(1), home(2), checkout(3)], 'c2');
    expect(await versions()).toEqual(before);
    const tests = await seen();
    for (const n of [1, 2, 3]) expect(tests.get(testId(n))).toMatchObject({ first: 'c1', last: 'c2', updated_at: second });
    const ids = (await ownApi.get(`/api/test-cases/v2?project_id=${own.projectId}&last_seen_commit_sha=c2`)).body.data.test_cases.map(
      (t: { id: string }) => t.id,
    );
    expect(ids.sort()).toEqual([testId(1), testId(2), testId(3)]);
  });

  it('when a build lists part of a file, then only the listed tests advance and later whole builds advance all', async () => {
    const partial = await build([home(1)], 'c3');
    let tests = await seen();
    expect(tests.get(testId(1))).toMatchObject({ last: 'c3', updated_at: partial });
    expect(tests.get(testId(2))).toMatchObject({ last: 'c2' });
    expect(tests.get(testId(3))).toMatchObject({ last: 'c2' });
    expect((tests.get(testId(2))?.updated_at ?? '') < partial).toBe(true);
    // The file's tests whole again: all of them advance; the next build like it rewrites none.
    await build([home(1), home(2)], 'c4');
    const before = await versions();
    const whole = await build([home(1), home(2)], 'c5');
    expect(await versions()).toEqual(before);
    tests = await seen();
    expect(tests.get(testId(1))).toMatchObject({ last: 'c5', updated_at: whole });
    expect(tests.get(testId(2))).toMatchObject({ last: 'c5', updated_at: whole });
    expect(tests.get(testId(3))).toMatchObject({ last: 'c2' });
  });

  it('when a build has no commit, then the last seen commit stays and the time advances', async () => {
    const again = await build([home(1), home(2)], null);
    expect((await seen()).get(testId(1))).toMatchObject({ last: 'c5', updated_at: again });
    // A test that leaves its listing in a build without commit keeps its last commit too.
    await build([listed(4, { file_path: 'tests/other.spec.ts' }), listed(5, { file_path: 'tests/other.spec.ts' })], 'c6');
    const left = await build([listed(5, { file_path: 'tests/other.spec.ts' })], null);
    expect((await seen()).get(testId(5))).toMatchObject({ last: 'c6', updated_at: left });
    await build([listed(5, { file_path: 'tests/other.spec.ts' })], 'c7');
    const tests = await seen();
    expect(tests.get(testId(5))).toMatchObject({ last: 'c7' });
    expect(tests.get(testId(4))).toMatchObject({ last: 'c6' });
    expect(tests.get(testId(1))).toMatchObject({ last: 'c5' });
  });

  it('when a listed test changed or was inactive, then its row is written and its tags set by hand stay', async () => {
    await server.sql`update test_cases set is_active = false where project_id = ${own.projectId} and id = ${testId(3)}`;
    expect((await ownApi.put(`/api/test-cases/${testId(2)}/tags`, { tags: ['kept'] })).status).toBe(200);
    const before = await versions();
    await build([home(1, { title: 'renamed' }), home(2, { tags: ['@listed'] }), checkout(3)], 'c8');
    const after = await versions();
    expect(after.get(testId(1))).not.toEqual(before.get(testId(1)));
    expect(after.get(testId(3))).not.toEqual(before.get(testId(3)));
    const tests = await seen();
    expect(tests.get(testId(1))).toMatchObject({ name: 'renamed', last: 'c8' });
    expect(tests.get(testId(3))).toMatchObject({ last: 'c8' });
    expect(tests.get(testId(2))).toMatchObject({ last: 'c8' });
    const active = (await ownApi.get(`/api/test-cases/v2?project_id=${own.projectId}`)).body.data.test_cases;
    expect(active.map((t: { id: string }) => t.id).sort()).toEqual([testId(1), testId(2), testId(3), testId(4), testId(5)]);
    expect(active.find((t: { id: string }) => t.id === testId(2)).tags).toEqual(['@kept']);
  });
});
