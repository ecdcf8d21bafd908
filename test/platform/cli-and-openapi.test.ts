import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/config.ts';
import { connect } from '../../server/src/db.ts';
import { createLogger } from '../../server/src/logger.ts';
import { listMigrations, migrate } from '../../server/src/migrate.ts';
import { FileStorage } from '../../server/src/storage/blobs.ts';
import { createTestDatabase, type TestDatabase, throwawayDatabase } from '../helpers/database.ts';
import { serveInProcess } from '../helpers/app.ts';
import { client } from '../helpers/http.ts';
import { freePort, httpWorkersOf, type ServedNode, serveNode, spawnProctor } from '../helpers/process.ts';
import { printedKey } from '../helpers/release.ts';

describe('migrations', () => {
  // Only a real PostgreSQL has a fresh database per test file to race on.
  it.skipIf(!process.env.DATABASE_URL)('when three servers migrate a fresh database at once, then each migration is applied once', async () => {
    const db = await throwawayDatabase(process.env.DATABASE_URL as string, { prefix: 'proctor_race', poolMax: 1, migrated: false });
    const clients = [connect(db.url, 2), connect(db.url, 2), connect(db.url, 2)];
    try {
      const applied = await Promise.all(clients.map((sql) => migrate(sql)));
      expect(applied.flat().sort()).toEqual(
        listMigrations()
          .map((m) => m.name)
          .sort(),
      );
      const [count] = await (clients[0] as ReturnType<typeof connect>)`select count(*)::int as n from schema_migrations`;
      expect(count?.n).toBe(listMigrations().length);
    } finally {
      await Promise.all(clients.map((sql) => sql.end()));
      await db.drop();
    }
  });
});

describe('health', () => {
  it('when the database does not answer, then /healthz is 503', async () => {
    const port = await freePort();
    const sql = connect(`postgres://postgres@127.0.0.1:${port}/nothing`, 1);
    const config = loadConfig({ PORT: '0', PROCTOR_SIGNING_SECRET: 'x'.repeat(20) });
    const server = await serveInProcess({
      sql,
      config,
      logger: createLogger('silent'),
      clock: () => new Date(),
      signingSecret: 'x'.repeat(20),
      storage: new FileStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-h-'))),
    });
    try {
      const response = await fetch(`${server.url}/healthz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: 'unavailable' });
    } finally {
      await server.close();
      await sql.end({ timeout: 1 });
    }
  });
});

describe('the command line and the demo', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  async function cli(...args: string[]): Promise<string> {
    const run = spawnProctor(args, { DATABASE_URL: db.url });
    const code = await run.exited;
    if (code !== 0) throw new Error(`proctor ${args.join(' ')} exited ${code}: ${run.output()}`);
    return run.output().trim();
  }

  it('when users, memberships, linked accounts and personal keys are made by the CLI, then the API serves them', async () => {
    const projectId = await cli('project', 'create', '--name', 'Web', '--repo', 'git@github.com:acme/web.git');
    expect(projectId).toMatch(/^\d+$/);
    const userId = await cli('user', 'create', '--email', 'ann@example.com', '--name', 'Ann Lee');
    expect(await cli('member', 'add', '--project', projectId, '--user', userId)).toBe('ok');
    const chat = { user_id: 'U1', user_name: 'ann', real_name: 'Ann Lee', display_name: 'ann', image_url: 'https://i/1', team_id: 'T1' };
    expect(await cli('user', 'link', '--user', userId, '--chat', JSON.stringify(chat))).toBe('ok');
    const key = await cli('key', 'create', '--user', userId);
    expect(key).toMatch(/^prc_u_/);
    const server = await serveNode({ DATABASE_URL: db.url, PROCTOR_DEMO: 'false', PROCTOR_EXECUTOR_CONCURRENCY: '0', PROCTOR_DB_POOL_MAX: '1' });
    try {
      const me = await client(server.url, key).get(`/api/users/${userId}`);
      expect(me.body.data).toMatchObject({ id: userId, email: 'ann@example.com', name: 'Ann Lee', connected_accounts: { chat: [chat], scm: [] } });
      const [project] = await db.sql`select repo_name from projects where id = ${Number(projectId)}`;
      expect(project?.repo_name).toBe('acme/web');
    } finally {
      await server.stop();
    }
    const bad = spawnProctor(['member', 'add', '--project', 'x', '--user', userId], { DATABASE_URL: db.url });
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('--project must be a project id');
    expect(await cli('analytics', 'rebuild', '--project', projectId)).toBe('rollups rebuilt');
  });

  it('when npm start meets an empty database, then it makes the demo project, prints its key once and a sign-in link to the dashboard', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-demo-'));
    let server: ServedNode | undefined;
    try {
      // Two HTTP workers are asked for, but the embedded database serves one process.
      server = await serveNode({ DATABASE_URL: '', PROCTOR_DATA_DIR: dataDir, PROCTOR_EXECUTOR_CONCURRENCY: '0', PROCTOR_HTTP_WORKERS: '2' });
      const { port } = server;
      expect(server.output()).toContain('the embedded database serves one process');
      expect(httpWorkersOf(server.child.pid as number)).toEqual([]);
      // The demo is made once the server listens (its links carry the port): its key comes just after.
      const key = await printedKey(server);
      const environments = await client(`http://127.0.0.1:${port}`, key).get('/api/environments');
      expect(environments.body.data.environments.map((e: { slug: string }) => e.slug)).toEqual(['local']);
      expect(server.output()).toContain(`curl -s -H "Authorization: Bearer ${key}" http://localhost:${port}/api/environments`);
      const link = new RegExp(`http://localhost:${port}/sign-in/link\\?token=[\\w-]+`).exec(server.output())?.[0] as string;
      const signedIn = await fetch(link.replace('localhost', '127.0.0.1'), { redirect: 'manual' });
      expect(signedIn.status).toBe(303);
      const cookie = (signedIn.headers.get('set-cookie') as string).split(';')[0] as string;
      const projects = await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } });
      expect(await projects.text()).toContain('>Demo</a>');
    } finally {
      await server?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the OpenAPI document', () => {
  it('when it is read, then every path clients are written against is in it', async () => {
    const config = loadConfig({ PORT: '0', PROCTOR_SIGNING_SECRET: 'x'.repeat(20) });
    const { openApiDocument } = createApp({
      sql: connect('postgres://127.0.0.1:1/x', 1),
      config,
      logger: createLogger('silent'),
      clock: () => new Date(),
      signingSecret: 'x'.repeat(20),
      storage: new FileStorage(os.tmpdir()),
    });
    const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
    const expected: [string, string][] = [
      ['put', '/api/test-runs'],
      ['get', '/api/test-runs'],
      ['get', '/api/test-runs/{id}'],
      ['post', '/api/test-runs/{id}/cancel'],
      ['post', '/api/failure-groups/{id}/members'],
      ['get', '/api/failure-groups'],
      ['get', '/api/failure-groups/{id}'],
      ['patch', '/api/failure-groups/{id}'],
      ['delete', '/api/failure-groups/{id}/members/{test_case_id}'],
      ['post', '/api/snoozes'],
      ['get', '/api/snoozes'],
      ['patch', '/api/snoozes/{id}'],
      ['delete', '/api/snoozes/{id}'],
      ['post', '/api/snoozes/{id}/test-ids'],
      ['get', '/api/environments'],
      ['post', '/api/environments'],
      ['get', '/api/environments/{id}'],
      ['patch', '/api/environments/{id}'],
      ['delete', '/api/environments/{id}'],
      ['post', '/api/environments/{id}/sync'],
      ['post', '/api/resources'],
      ['get', '/api/resources'],
      ['delete', '/api/resources/{id}'],
      ['get', '/api/files'],
      ['patch', '/api/files/{id}'],
      ['put', '/files/{id}/upload'],
      ['get', '/files/{id}/content'],
      ['get', '/api/test-cases/v2'],
      ['put', '/api/test-cases/{id}/tags'],
      ['get', '/api/users/{id}'],
      ['get', '/badges/{project_id}/{file}'],
      ['get', '/api/openapi.json'],
      ['get', '/healthz'],
    ];
    for (const [method, route] of expected) expect(paths[route]?.[method], `${method} ${route}`).toBeDefined();
  });
});
