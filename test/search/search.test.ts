import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// The header's search over a project: tests by title or file, runs by number, commit or branch,
// failure groups by title; never another project's.
let server: TestServer;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
const runs: { id: number; number: number }[] = [];
const [checkout, login, percent] = [1, 2, 3].map((n) => testId(n)) as [string, string, string];

async function reportRun(via: ReturnType<typeof client>, branch: string, commit: string, failing: boolean): Promise<{ id: number; number: number }> {
  const run = (await via.post('/api/test-runs/report', { environment: 'ci', branch, commit })).body.data.test_run;
  await via.post(`/api/test-runs/${run.id}/shards/1/begin`, {
    tests: [
      listedTest(checkout, { title: 'pays with a saved card', file_path: 'tests/checkout.spec.ts' }),
      listedTest(login, { title: 'signs in with a passkey', file_path: 'tests/account/login.spec.ts' }),
      listedTest(percent, { title: 'shows 100% off_sale prices', file_path: 'tests/prices.spec.ts' }),
    ],
    complete: true,
  });
  const results = [
    attempt(
      checkout,
      failing
        ? { final: 'unexpected', status: 'failed', error_message: 'Error: the payment gateway answered 502 Bad Gateway', failureGroupId: 'fg-gateway' }
        : {},
    ),
    attempt(login),
    attempt(percent),
  ];
  expect((await via.post(`/api/test-runs/${run.id}/results`, { shard: 1, results })).status).toBe(200);
  if (failing) expect((await via.post('/api/failure-groups/fg-gateway/members', { test_run_id: run.id, test_case_id: checkout })).status).toBe(200);
  expect((await via.post(`/api/test-runs/${run.id}/shards/1/end`, { status: failing ? 'failed' : 'passed' })).status).toBe(200);
  return { id: run.id, number: run.number };
}

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  api = client(server.url, project.key);
  const stranger = await seedProject(server.sql);
  other = client(server.url, stranger.key);
  runs.push(await reportRun(api, 'main', 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', false));
  runs.push(await reportRun(api, 'feature/passkeys', 'ffee00112233445566778899aabbccddeeff0011', true));
  runs.push(await reportRun(api, 'main', 'a1b2c3d4e5f60718293a4b5c6d7e8f90deadbeef', true));
  // Another project's run on a branch of the same name, and its test of the same title.
  await reportRun(other, 'feature/passkeys', 'ffee00112233445566778899aabbccddeeff0011', true);
}, 60_000);

afterAll(async () => server?.close());

async function search(q: string, limit?: number) {
  const answer = await api.get(`/api/search?q=${encodeURIComponent(q)}${limit ? `&limit=${limit}` : ''}`);
  expect(answer.status).toBe(200);
  return answer.body.data.search as {
    tests: { test_case_id: string; title: string }[];
    runs: { id: number; number: number; matched: string; branch: string | null; commit: string | null }[];
    failure_groups: { id: string; title: string }[];
  };
}

describe('searching a project', () => {
  it('when the text is part of a title or a file path, whatever its case, then those tests are found', async () => {
    expect((await search('PASSKEY')).tests.map((t) => t.test_case_id)).toEqual([login]);
    expect((await search('account/login')).tests.map((t) => t.test_case_id)).toEqual([login]);
    expect((await search('.spec.ts')).tests).toHaveLength(3);
  });

  it('when the text holds % or _, then they match themselves and nothing else', async () => {
    expect((await search('100%')).tests.map((t) => t.test_case_id)).toEqual([percent]);
    expect((await search('off_sale')).tests.map((t) => t.test_case_id)).toEqual([percent]);
    expect((await search('%')).tests.map((t) => t.test_case_id)).toEqual([percent]);
  });

  it("when the text is a run's number, with or without #, then that run comes first", async () => {
    const second = runs[1] as { id: number; number: number };
    for (const q of [`#${second.number}`, String(second.number)]) {
      const [first] = (await search(q)).runs;
      expect(first).toMatchObject({ id: second.id, matched: 'number' });
    }
  });

  it("when the text starts a commit's hash, then the runs of that commit are found, newest first", async () => {
    const found = (await search('A1B2C3D')).runs;
    expect(found.map((r) => [r.id, r.matched])).toEqual([
      [(runs[2] as { id: number }).id, 'commit'],
      [(runs[0] as { id: number }).id, 'commit'],
    ]);
    expect((await search('deadbeef')).runs).toEqual([]);
  });

  it('when the text is part of a branch, then its runs are found, and never another project’s', async () => {
    const found = (await search('passkeys')).runs;
    expect(found.map((r) => r.id)).toEqual([(runs[1] as { id: number }).id]);
    expect(found[0]).toMatchObject({ branch: 'feature/passkeys', matched: 'branch' });
  });

  it("when the text is part of a failure group's title, then the group is found", async () => {
    const groups = (await search('payment gateway')).failure_groups;
    expect(groups).toHaveLength(1);
    expect(groups[0]?.title).toContain('502 Bad Gateway');
    expect((await search('no such failure anywhere')).failure_groups).toEqual([]);
  });

  it('when a limit is given, then each kind holds at most that many', async () => {
    const found = await search('main', 1);
    expect(found.runs).toHaveLength(1);
    expect((await search('spec', 2)).tests).toHaveLength(2);
  });

  it('when the text is missing, blank or too long, or the limit out of range, then a 400 names the field', async () => {
    for (const [path, field] of [
      ['/api/search', 'query.q'],
      ['/api/search?q=%20%20', 'query.q'],
      [`/api/search?q=${'x'.repeat(201)}`, 'query.q'],
      ['/api/search?q=a&limit=21', 'query.limit'],
      ['/api/search?q=a&limit=0', 'query.limit'],
      ['/api/search?q=a&color=red', 'query'],
    ] as const) {
      const answer = await api.get(path);
      expect(answer.status, path).toBe(400);
      expect(answer.body.error.message, path).toContain(field);
    }
  });

  it('when another project searches the same words, then it finds only its own', async () => {
    const answer = await other.get('/api/search?q=passkeys');
    const found = answer.body.data.search;
    expect(found.runs).toHaveLength(1);
    expect(found.runs[0].id).not.toBe((runs[1] as { id: number }).id);
  });
});
