import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../reporter/src/reporter/settings.ts';
import { describeDelivery, Uploader } from '../../reporter/src/reporter/uploader.ts';
import { listMigrations, migrate } from '../../server/src/migrate.ts';
import { composeStory } from '../../server/src/notifications/compose.ts';
import { slackMessage } from '../../server/src/notifications/messages.ts';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { runIdLinkedIn } from '../helpers/runs.ts';
import { seedEnvironment, seedProjectWithEnvironment, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Runs are numbered per project: a project's first run is #1 whatever other projects ran, runs
// made at the same time get numbers of their own, and pages and messages name a run by it.
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const numbers = async (projectId: number) =>
  (await server.sql<{ number: number }[]>`select number from test_runs where project_id = ${projectId} order by id`).map((row) => row.number);

async function seedProjectWithEnvironmentIds(): Promise<{ projectId: number; environmentId: number; key: string }> {
  const seeded = await seedProjectWithEnvironment(server.sql, 'ci');
  const [environment] = await server.sql<{ id: number }[]>`select id from environments where project_id = ${seeded.projectId} and slug = 'ci'`;
  return { ...seeded, environmentId: environment?.id as number };
}

describe('run numbers', () => {
  it('when two projects report their first runs, then each is #1, on its page, in the API and in its Slack message, and the URLs keep the ids', async () => {
    const first = await seedProjectWithEnvironment(server.sql, 'ci');
    const second = await seedProjectWithEnvironment(server.sql, 'ci');
    const one = client(server.url, first.key);
    const two = client(server.url, second.key);
    const runs = [];
    for (const api of [one, two, one])
      runs.push((await api.post('/api/test-runs/report', { environment: 'ci' })).body.data.test_run as { id: number; number: number });
    expect(runs.map((run) => run.number)).toEqual([1, 1, 2]);
    expect(new Set(runs.map((run) => run.id)).size).toBe(3);

    const read = (await two.get(`/api/test-runs/${runs[1]?.id}`)).body.data.test_run.testRun;
    expect(read).toMatchObject({ id: runs[1]?.id, number: 1 });
    expect(read.summary_url).toContain(`/runs/${runs[1]?.id}?token=`);
    const listed = (await one.get('/api/test-runs')).body.data.test_runs as { id: number; number: number }[];
    expect(listed.map((run) => run.number).sort()).toEqual([1, 2]);

    const page = await (await fetch(read.summary_url)).text();
    expect(page).toContain('<h1>Run #1 ');
    expect(page).toContain('<title>Run #1 ');
    const story = await composeStory(server.sql, runs[1]?.id as number, (id) => `${server.url}/runs/${id}`);
    expect(slackMessage(story).text).toContain('run #1 running in *ci*');
    expect(story.run.summary_url).toBe(`${server.url}/runs/${runs[1]?.id}`);

    const triggered = (await one.put('/api/test-runs', { environment: 'ci' })).body.data.test_run;
    expect((await one.get(`/api/test-runs/${triggered.id}`)).body.data.test_run.testRun.number).toBe(3);
  });

  it('when 20 runs of one project are made at the same time, then they get 20 distinct numbers, 1 to 20', async () => {
    const { projectId, key } = await seedProjectWithEnvironment(server.sql, 'ci');
    const api = client(server.url, key);
    const made = await Promise.all(Array.from({ length: 20 }, () => api.post('/api/test-runs/report', { environment: 'ci' })));
    expect(made.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(made.map((answer) => answer.body.data.test_run.number as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect((await numbers(projectId)).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("when a CI's four shards start its run at the same time by one run key, then they share one run and spend one number", async () => {
    const { projectId, key } = await seedProjectWithEnvironment(server.sql, 'ci');
    const api = client(server.url, key);
    const shards = await Promise.all(
      Array.from({ length: 4 }, () => api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-1', total_shards: 4 })),
    );
    expect(new Set(shards.map((answer) => answer.body.data.test_run.id)).size).toBe(1);
    expect(shards.map((answer) => answer.body.data.test_run.number)).toEqual([1, 1, 1, 1]);
    expect((await api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-2' })).body.data.test_run.number).toBe(2);
    expect(await numbers(projectId)).toEqual([1, 2]);
  });
});

/** The reporter's last line after one shard of 3 passing tests, as Playwright would end it; `env` as the reporter's. */
async function reporterLine(key: string, env: Record<string, string>): Promise<string> {
  const resolved = resolveSettings(
    { url: server.url, apiKey: key, flushIntervalMs: 5, batchSize: 2, maxAttempts: 1 },
    { PROCTOR_ENVIRONMENT: 'ci', PROCTOR_COMMIT: 'a'.repeat(40), PROCTOR_BRANCH: 'main', ...env },
  );
  if (!resolved.ok) throw new Error(resolved.reason);
  const uploader = new Uploader(resolved.settings);
  const tests = [1, 2, 3].map(testId);
  uploader.start({ projectDir: process.cwd(), tests: tests.map((id) => listedTest(id)), complete: true, shard: 1, totalShards: 1, startedAt: new Date() });
  for (const id of tests) uploader.add(attempt(id));
  return describeDelivery(await uploader.finish('passed', []));
}

describe('what the reporter says', () => {
  it('when the reporter makes its run and when it is given one (PROCTOR_RUN_ID), then its last line names the run by its number in the project and links it by its id', async () => {
    // Another project's run first: ids are global, numbers are the project's.
    const other = await seedProjectWithEnvironment(server.sql, 'ci');
    await client(server.url, other.key).post('/api/test-runs/report', { environment: 'ci' });
    const { key } = await seedProjectWithEnvironment(server.sql, 'ci');
    const api = client(server.url, key);

    const made = await reporterLine(key, { PROCTOR_RUN_KEY: 'build-1' });
    expect(made).toMatch(/^\[proctor\] 3\/3 results delivered to run #1 \(passed\) http/);
    const madeRun = (await api.get(`/api/test-runs/${runIdLinkedIn(made)}`)).body.data.test_run.testRun;
    expect(madeRun).toMatchObject({ number: 1, state: 'passed' });
    expect(madeRun.id).not.toBe(1);

    const given = (await api.post('/api/test-runs/report', { environment: 'ci', run_key: 'build-2' })).body.data.test_run as { id: number; number: number };
    expect(given.number).toBe(2);
    const line = await reporterLine(key, { PROCTOR_RUN_ID: String(given.id) });
    expect(line).toMatch(/^\[proctor\] 3\/3 results delivered to run #2 \(passed\) http/);
    expect(runIdLinkedIn(line)).toBe(given.id);
  });

  it("when the run the reporter is given is not the project's, then its line names it by the id it was given, and says that it is one", async () => {
    const other = await seedProjectWithEnvironment(server.sql, 'ci');
    const foreign = (await client(server.url, other.key).post('/api/test-runs/report', { environment: 'ci' })).body.data.test_run as { id: number };
    const { key } = await seedProjectWithEnvironment(server.sql, 'ci');
    const line = await reporterLine(key, { PROCTOR_RUN_ID: String(foreign.id) });
    expect(line.startsWith(`[proctor] 0/3 results delivered to run id ${foreign.id}; not delivered: could not start the run: HTTP 404`)).toBe(true);
  });
});

describe('the migration that numbers runs', () => {
  it('when runs of two projects exist before it, then each project numbers its runs from 1 in the order of their ids, and the next run follows', async () => {
    const migrations = listMigrations();
    const before = migrations.filter((migration) => migration.version < 42);
    const db = await createTestDatabase({ migrations: before });
    try {
      // Rows as that schema holds them, written by SQL: this version's code expects the columns 042 adds.
      const project = async (name: string) =>
        (
          (await db.sql<{ id: number }[]>`insert into projects (name, repo_url, repo_name) values (${name}, '/nonexistent', ${name}) returning id`)[0] as {
            id: number;
          }
        ).id;
      const a = { projectId: await project('a') };
      const b = { projectId: await project('b') };
      const environments = { [a.projectId]: await seedEnvironment(db.sql, a.projectId), [b.projectId]: await seedEnvironment(db.sql, b.projectId) };
      const order = [b.projectId, a.projectId, a.projectId, b.projectId, a.projectId];
      const ids: number[] = [];
      for (const projectId of order) {
        const [row] = await db.sql<{ id: number }[]>`
          insert into test_runs (project_id, environment_id, state, origin) values (${projectId}, ${environments[projectId] as number}, 'passed', 'api') returning id`;
        ids.push((row as { id: number }).id);
      }
      expect(await db.sql`select 1 from information_schema.columns where table_name = 'test_runs' and column_name = 'number'`).toHaveLength(0);
      await migrate(db.sql, migrations);
      const rows = await db.sql<{ id: number; number: number }[]>`select id, number from test_runs order by id`;
      expect(rows).toEqual(ids.map((id, i) => ({ id, number: [1, 1, 2, 2, 3][i] })));
      const [next] = await db.sql<{ number: number }[]>`
        insert into test_runs (project_id, environment_id, state, origin) values (${a.projectId}, ${environments[a.projectId] as number}, 'passed', 'api') returning number`;
      expect(next?.number).toBe(4);
    } finally {
      await db.drop();
    }
  });
  // On PostgreSQL: the embedded database has one connection, on which transactions take turns whatever they lock.
  it.runIf(Boolean(process.env.DATABASE_URL))(
    'when a run is made in a transaction that stays open (a JUnit upload being written), then another run of the project is made meanwhile, and a rolled-back run spends its number',
    async () => {
      const { projectId, environmentId, key } = await seedProjectWithEnvironmentIds();
      const api = client(server.url, key);
      expect((await api.post('/api/test-runs/report', { environment: 'ci' })).body.data.test_run.number).toBe(1);
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let madeInside = 0;
      const open = server.sql
        .begin(async (tx) => {
          const [run] = await tx<{ number: number }[]>`
          insert into test_runs (project_id, environment_id, state, origin, total_shards, created_at)
          values (${projectId}, ${environmentId}, 'running', 'reporter', 1, now()) returning number`;
          madeInside = run?.number ?? 0;
          await held;
          throw new Error('rolled back');
        })
        .catch((error: Error) => {
          if (madeInside === 0) madeInside = -1;
          return error;
        });
      while (madeInside === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(madeInside, 'the held transaction made its run').toBeGreaterThan(0);
      const meanwhile = await Promise.race([
        api.post('/api/test-runs/report', { environment: 'ci' }).then((answer) => answer.body.data.test_run.number as number),
        new Promise<string>((resolve) => setTimeout(() => resolve('waited for the open transaction'), 15_000)),
      ]);
      release();
      await open;
      expect(madeInside).toBe(2);
      expect(meanwhile).toBe(3);
      expect(await numbers(projectId)).toEqual([1, 3]);
    },
  );
});
