import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { seedEnvironment, seedProject, seedRun, seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let projectId: number;
let machine: ReturnType<typeof client>;
let human: ReturnType<typeof client>;
let humanId: string;
let environmentA: number;
let environmentB: number;
let groupCounter = 0;
const newGroup = () => `fg_test${++groupCounter}`;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  machine = client(server.url, project.key);
  const user = await seedUser(server.sql, [projectId]);
  humanId = user.userId;
  human = client(server.url, user.key);
  environmentA = await seedEnvironment(server.sql, projectId, 'a');
  environmentB = await seedEnvironment(server.sql, projectId, 'b');
});
afterAll(async () => server?.close());

const attach = (as: ReturnType<typeof client>, group: string, runId: number, test = testId(1)) =>
  as.post(`/api/failure-groups/${group}/members`, { test_run_id: runId, test_case_id: test });

describe('attaching members', () => {
  it('when a failure is attached to an unknown group, then the group is created and the member has every field', async () => {
    const group = newGroup();
    const runId = await seedRun(server.sql, projectId, environmentA);
    const response = await attach(machine, group, runId);
    expect(response.status).toBe(200);
    expect(response.body.data.member).toEqual({
      test_case_id: testId(1),
      state: 'active',
      source: 'machine',
      first_seen_at: expect.any(String),
      first_test_run_id: runId,
      last_seen_at: expect.any(String),
      last_test_run_id: runId,
      last_environment_id: environmentA,
      environments: [environmentA],
      sighting_count: 1,
      chat_session_id: null,
      match_run_id: null,
      actor_id: null,
      detached_at: null,
      detached_by: null,
    });
    const read = (await machine.get(`/api/failure-groups/${group}`)).body.data;
    expect(read.failure_group).toMatchObject({ id: group, status: 'open', diagnosis: null, member_count: 1, occurrence_count: 1, last_test_run_id: runId });
    expect(read.members).toHaveLength(1);
  });

  it('when the same run and test are attached again, then it is the same membership and one sighting', async () => {
    const group = newGroup();
    const runId = await seedRun(server.sql, projectId, environmentA);
    await attach(machine, group, runId);
    const again = await attach(machine, group, runId);
    expect(again.body.data.member.sighting_count).toBe(1);
    expect((await machine.get(`/api/failure-groups/${group}`)).body.data.failure_group.occurrence_count).toBe(1);
  });

  it('when another run sights the member, then the sighting refreshes sighting_count, last_seen_* and environments', async () => {
    const group = newGroup();
    const first = await seedRun(server.sql, projectId, environmentA);
    await attach(machine, group, first);
    server.clock.advance(60_000);
    const second = await seedRun(server.sql, projectId, environmentB);
    const member = (await attach(machine, group, second)).body.data.member;
    expect(member).toMatchObject({
      sighting_count: 2,
      first_test_run_id: first,
      last_test_run_id: second,
      last_environment_id: environmentB,
      environments: [environmentA, environmentB].sort((a, b) => a - b),
    });
    expect(new Date(member.last_seen_at).getTime() - new Date(member.first_seen_at).getTime()).toBe(60_000);
    const groupRow = (await machine.get(`/api/failure-groups/${group}`)).body.data.failure_group;
    expect(groupRow).toMatchObject({ occurrence_count: 2, member_count: 1, last_test_run_id: second });
  });

  it('when pw_test_id is given, then it is the test id; a mismatch or neither is a 400', async () => {
    const group = newGroup();
    const runId = await seedRun(server.sql, projectId, environmentA);
    const byPw = await machine.post(`/api/failure-groups/${group}/members`, { test_run_id: runId, pw_test_id: testId(5) });
    expect(byPw.body.data.member.test_case_id).toBe(testId(5));
    const both = await machine.post(`/api/failure-groups/${group}/members`, { test_run_id: runId, test_case_id: testId(5), pw_test_id: testId(5) });
    expect(both.status).toBe(200);
    const mismatch = await machine.post(`/api/failure-groups/${group}/members`, { test_run_id: runId, test_case_id: testId(5), pw_test_id: testId(6) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.message).toContain('body.pw_test_id');
    const neither = await machine.post(`/api/failure-groups/${group}/members`, { test_run_id: runId });
    expect(neither.status).toBe(400);
    expect((await machine.post(`/api/failure-groups/${group}/members`, { test_run_id: 'x', test_case_id: testId(1) })).status).toBe(400);
  });

  it('when the run or the group belongs to another project, then it is a 404', async () => {
    const other = await seedProject(server.sql);
    const otherEnv = await seedEnvironment(server.sql, other.projectId, 'x');
    const foreignRun = await seedRun(server.sql, other.projectId, otherEnv);
    expect((await attach(machine, newGroup(), foreignRun)).status).toBe(404);
    const group = newGroup();
    await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    const otherClient = client(server.url, other.key);
    expect((await otherClient.get(`/api/failure-groups/${group}`)).status).toBe(404);
    expect((await otherClient.delete(`/api/failure-groups/${group}/members/${testId(1)}`)).status).toBe(404);
  });
});

describe('detaching', () => {
  it('when a human detached a member, then a machine attach does not bring it back, and a human attach does', async () => {
    const group = newGroup();
    await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    const detached = await human.delete(`/api/failure-groups/${group}/members/${testId(1)}`);
    expect(detached.status).toBe(200);
    expect(detached.body.data.member).toMatchObject({ state: 'detached', detached_by: humanId });
    expect(detached.body.data.member.detached_at).toEqual(expect.any(String));
    const machineAgain = await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    expect(machineAgain.body.data.member).toMatchObject({ state: 'detached', sighting_count: 2 });
    expect((await machine.get(`/api/failure-groups/${group}`)).body.data.failure_group.member_count).toBe(0);
    const humanAgain = await attach(human, group, await seedRun(server.sql, projectId, environmentA));
    expect(humanAgain.body.data.member).toMatchObject({ state: 'active', source: 'human', actor_id: humanId, detached_at: null, detached_by: null });
    expect((await machine.get(`/api/failure-groups/${group}`)).body.data.failure_group.member_count).toBe(1);
  });

  it('when a machine detached a member, then the next machine attach brings it back', async () => {
    const group = newGroup();
    await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    expect((await machine.delete(`/api/failure-groups/${group}/members/${testId(1)}`)).body.data.member.detached_by).toBe('machine');
    expect((await attach(machine, group, await seedRun(server.sql, projectId, environmentA))).body.data.member.state).toBe('active');
  });

  it('when the member or the group is unknown, then it is a 404', async () => {
    const group = newGroup();
    await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    expect((await machine.delete(`/api/failure-groups/${group}/members/${testId(99)}`)).status).toBe(404);
    expect((await machine.delete(`/api/failure-groups/fg_nothing/members/${testId(1)}`)).status).toBe(404);
  });

  it('when the log is read, then it is append-only: a detach and a re-attach are new events', async () => {
    const group = newGroup();
    await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    await human.delete(`/api/failure-groups/${group}/members/${testId(1)}`);
    await attach(human, group, await seedRun(server.sql, projectId, environmentA));
    const events = await server.sql`select kind, source from failure_group_events where project_id = ${projectId} and group_id = ${group} order by id`;
    expect(events.map((e) => `${e.kind}:${e.source}`)).toEqual(['attach:machine', 'detach:human', 'attach:human']);
  });
});

describe('concurrent attaches', () => {
  it('when the same run and test are attached 20 times at once, then there is one member and one sighting, and no error', async () => {
    const group = newGroup();
    const runId = await seedRun(server.sql, projectId, environmentA);
    const responses = await Promise.all(Array.from({ length: 20 }, () => attach(machine, group, runId)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const read = (await machine.get(`/api/failure-groups/${group}`)).body.data;
    expect(read.members).toHaveLength(1);
    expect(read.members[0].sighting_count).toBe(1);
    expect(read.failure_group.occurrence_count).toBe(1);
  });

  it('when 20 different runs attach the same test at once, then there is one member with 20 sightings, and no error', async () => {
    const group = newGroup();
    const runs = await Promise.all(Array.from({ length: 20 }, () => seedRun(server.sql, projectId, environmentA)));
    const responses = await Promise.all(runs.map((runId) => attach(machine, group, runId)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const read = (await machine.get(`/api/failure-groups/${group}`)).body.data;
    expect(read.members).toHaveLength(1);
    expect(read.members[0].sighting_count).toBe(20);
    expect(read.failure_group).toMatchObject({ occurrence_count: 20, member_count: 1 });
  });
});

describe('triage', () => {
  it('when a diagnosis is set, then it carries the author from the key and the time', async () => {
    const group = newGroup();
    await attach(machine, group, await seedRun(server.sql, projectId, environmentA));
    const byHuman = await human.patch(`/api/failure-groups/${group}`, { diagnosis: { summary: 'Banner copy changed', category: 'product-change' } });
    expect(byHuman.status).toBe(200);
    expect(byHuman.body.data.failure_group.diagnosis).toEqual({
      summary: 'Banner copy changed',
      category: 'product-change',
      author: humanId,
      created_at: expect.any(String),
    });
    const byMachine = await machine.patch(`/api/failure-groups/${group}`, { diagnosis: { summary: 'Flaky network', category: 'infra' } });
    expect(byMachine.body.data.failure_group.diagnosis.author).toBe('machine');
    expect((await machine.patch(`/api/failure-groups/${group}`, { diagnosis: { summary: '' } })).status).toBe(400);
    expect((await machine.patch(`/api/failure-groups/${group}`, { status: 'closed' })).status).toBe(400);
    expect((await machine.patch('/api/failure-groups/fg_unknown', { status: 'resolved' })).status).toBe(404);
  });

  it('when a resolved group is seen again, then it reopens; an ignored one stays ignored', async () => {
    const resolved = newGroup();
    await attach(machine, resolved, await seedRun(server.sql, projectId, environmentA));
    expect((await machine.patch(`/api/failure-groups/${resolved}`, { status: 'resolved' })).body.data.failure_group.status).toBe('resolved');
    await attach(machine, resolved, await seedRun(server.sql, projectId, environmentA));
    expect((await machine.get(`/api/failure-groups/${resolved}`)).body.data.failure_group.status).toBe('open');
    const ignored = newGroup();
    await attach(machine, ignored, await seedRun(server.sql, projectId, environmentA));
    await machine.patch(`/api/failure-groups/${ignored}`, { status: 'ignored' });
    await attach(machine, ignored, await seedRun(server.sql, projectId, environmentA));
    expect((await machine.get(`/api/failure-groups/${ignored}`)).body.data.failure_group.status).toBe('ignored');
  });

  it('when groups are listed, then the most recently seen come first, filtered by status, paginated', async () => {
    const project = await seedProject(server.sql);
    const mine = client(server.url, project.key);
    const env = await seedEnvironment(server.sql, project.projectId, 'e');
    for (const group of ['fg_old', 'fg_mid', 'fg_new']) {
      server.clock.advance(1000);
      await attach(mine, group, await seedRun(server.sql, project.projectId, env));
    }
    await mine.patch('/api/failure-groups/fg_mid', { status: 'resolved' });
    const all = await mine.get('/api/failure-groups');
    expect(all.body.data.failure_groups.map((g: { id: string }) => g.id)).toEqual(['fg_new', 'fg_mid', 'fg_old']);
    expect(all.body.pagination).toEqual({ page: 1, per_page: 20, total: 3, total_pages: 1 });
    expect((await mine.get('/api/failure-groups?status=open')).body.data.failure_groups.map((g: { id: string }) => g.id)).toEqual(['fg_new', 'fg_old']);
    expect((await mine.get('/api/failure-groups?per_page=1&page=2')).body.data.failure_groups.map((g: { id: string }) => g.id)).toEqual(['fg_mid']);
    expect((await mine.get('/api/failure-groups?status=maybe')).status).toBe(400);
  });
});

describe('titles', () => {
  const banner = 'Error: expect(locator).toHaveText(expected) failed\n\nLocator:  locator(\'#banner\')\nExpected: "Welcome back"\nReceived: "Hello"';

  /** A run of `environment` whose test failed with `message` at `location`, as the reporter sends it. */
  async function failedRun(message: string, location: string): Promise<number> {
    const runId = (await machine.post('/api/test-runs/report', { environment: 'a' })).body.data.test_run.id as number;
    await machine.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(9), { title: 'greets' })], complete: true });
    const failed = attempt(testId(9), { final: 'unexpected', status: 'failed', error_message: message, error_location: location });
    expect((await machine.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [failed] })).status).toBe(200);
    return runId;
  }

  it('when groups are made from failures, then each is titled by its failure and where, and a group whose title another holds is numbered', async () => {
    const [first, second, third] = [newGroup(), newGroup(), newGroup()];
    await attach(machine, first, await failedRun(banner, 'tests/home.spec.ts:19:5'), testId(9));
    await attach(machine, second, await failedRun(banner, 'tests/home.spec.ts:19:5'), testId(9));
    await attach(
      machine,
      third,
      await failedRun("TimeoutError: locator.click: Timeout 500ms exceeded.\nCall log:\n  - waiting for getByRole('button')", 'tests/cart.spec.ts:7:3'),
      testId(9),
    );
    const title = async (group: string) => (await machine.get(`/api/failure-groups/${group}`)).body.data.failure_group.title;
    expect(await title(first)).toBe("expect(locator('#banner')).toHaveText at home.spec.ts:19");
    expect(await title(second)).toBe("expect(locator('#banner')).toHaveText at home.spec.ts:19 (2)");
    expect(await title(third)).toBe("locator.click on getByRole('button') timed out at cart.spec.ts:7");
    // Seen again, a group keeps its title.
    await attach(machine, first, await failedRun(banner, 'tests/home.spec.ts:19:5'), testId(9));
    expect(await title(first)).toBe("expect(locator('#banner')).toHaveText at home.spec.ts:19");
    const listed = (await machine.get(`/api/test-runs/${await failedRun(banner, 'tests/home.spec.ts:19:5')}`)).body.data.test_run.flattenedSummaryDetails;
    expect(listed[0]).toMatchObject({ failure_group_id: null, failure_group_title: null });
  });

  it('when a member renames a group, then the title is the new one; a title another group holds is a 409, an empty one a 400', async () => {
    const [group, other] = [newGroup(), newGroup()];
    await attach(human, group, await seedRun(server.sql, projectId, environmentA));
    await attach(human, other, await seedRun(server.sql, projectId, environmentA));
    const renamed = await human.patch(`/api/failure-groups/${group}`, { title: '  Checkout total is off by the tax  ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.failure_group.title).toBe('Checkout total is off by the tax');
    const taken = await human.patch(`/api/failure-groups/${other}`, { title: 'Checkout total is off by the tax', status: 'resolved' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toMatch(/^body\.title: another failure group of the project is titled/);
    // Nothing half-written: the status of the refused change was not set.
    expect((await human.get(`/api/failure-groups/${other}`)).body.data.failure_group.status).toBe('open');
    const empty = await human.patch(`/api/failure-groups/${other}`, { title: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/^body\.title/);
    expect((await human.patch(`/api/failure-groups/${group}`, { title: 'Checkout total is off by the tax' })).status).toBe(200);
  });

  it('when a database holds groups that share a title, then migration 023 numbers the later ones and makes titles unique', async () => {
    const project = await seedProject(server.sql);
    await server.sql`drop index failure_groups_title`;
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
    for (const [id, title, minute] of [
      ['fg_a', 'boom', 1],
      ['fg_b', 'boom', 2],
      ['fg_c', 'boom (2)', 0],
      ['fg_d', 'boom', 3],
    ] as const) {
      await server.sql`insert into failure_groups (project_id, id, title, first_seen_at, last_seen_at, created_at, updated_at)
        values (${project.projectId}, ${id}, ${title}, ${at(minute)}, ${at(minute)}, ${at(minute)}, ${at(minute)})`;
    }
    await server.sql.unsafe(fs.readFileSync(path.join(ROOT, 'server/migrations/023_failure_group_titles.sql'), 'utf8'));
    const rows = await server.sql<{ id: string; title: string }[]>`
      select id, title from failure_groups where project_id = ${project.projectId} order by id`;
    expect(rows).toEqual([
      { id: 'fg_a', title: 'boom' },
      { id: 'fg_b', title: 'boom (3)' },
      { id: 'fg_c', title: 'boom (2)' },
      { id: 'fg_d', title: 'boom (4)' },
    ]);
  });
});
