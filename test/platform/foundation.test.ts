import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/src/config.ts';
import { listMigrations, migrate } from '../../server/src/migrate.ts';
import { linkAccount } from '../../server/src/users/store.ts';
import { client } from '../helpers/http.ts';
import { freePort, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const generalError = { data: null, error: { message: expect.any(String) } };

function concretePath(template: string): string {
  return template.replace(/\{[^}]+\}/g, '1');
}

describe('authentication', () => {
  it('when any documented route is called without a key or with a wrong one, then it answers 401 in the general shape', async () => {
    const document = (await client(server.url).get('/api/openapi.json')).body;
    const operations = Object.entries(document.paths as Record<string, Record<string, { security?: unknown[] }>>).flatMap(([route, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route, method, operation })),
    );
    const secured = operations.filter(({ operation }) => (operation.security ?? []).length > 0);
    expect(secured.length).toBeGreaterThan(3);
    for (const { route, method } of secured) {
      for (const key of [undefined, 'prc_p_000000000000_000000000000000000000000000000000000000000000000', 'nonsense']) {
        const response = await client(server.url, key).request(
          method.toUpperCase(),
          concretePath(route),
          method === 'get' || method === 'delete' ? undefined : {},
        );
        expect(response.status, `${method} ${route} with key ${key}`).toBe(401);
        expect(response.body).toEqual(generalError);
      }
    }
  });

  it('when a project key names another project in x-project-id, then it is refused with 403', async () => {
    const a = await seedProject(server.sql);
    const b = await seedProject(server.sql);
    const response = await client(server.url, a.key, { 'x-project-id': String(b.projectId) }).get('/api/environments');
    expect(response.status).toBe(403);
    expect(response.body).toEqual(generalError);
    const same = await client(server.url, a.key, { 'x-project-id': String(a.projectId) }).get('/api/environments');
    expect(same.status).toBe(200);
  });

  it('when a personal key asks for a project its user is not a member of, then it is refused with 403', async () => {
    const member = await seedProject(server.sql);
    const other = await seedProject(server.sql);
    const user = await seedUser(server.sql, [member.projectId]);
    const refused = await client(server.url, user.key, { 'x-project-id': String(other.projectId) }).get('/api/environments');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(generalError);
    const allowed = await client(server.url, user.key, { 'x-project-id': String(member.projectId) }).get('/api/environments');
    expect(allowed.status).toBe(200);
  });

  it('when a personal key of a user in several projects sends no x-project-id, then the 400 names the header', async () => {
    const a = await seedProject(server.sql);
    const b = await seedProject(server.sql);
    const user = await seedUser(server.sql, [a.projectId, b.projectId]);
    const response = await client(server.url, user.key).get('/api/environments');
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('x-project-id');
  });

  it('when an object of another project is asked for, then it is a 404 as if it did not exist', async () => {
    const a = await seedProject(server.sql);
    const b = await seedProject(server.sql);
    const created = await client(server.url, a.key).post('/api/environments', { name: 'Staging', slug: 'staging' });
    expect(created.status).toBe(201);
    const id = created.body.data.environment.id;
    expect((await client(server.url, b.key).get(`/api/environments/${id}`)).status).toBe(404);
    expect((await client(server.url, a.key).get(`/api/environments/${id}`)).status).toBe(200);
  });

  it('when keys are used, then no key appears in any log line', async () => {
    const a = await seedProject(server.sql);
    await client(server.url, a.key).get('/api/environments');
    await client(server.url, `${a.key}x`).get('/api/environments');
    expect(server.logs.length).toBeGreaterThan(0);
    expect(server.logs.join('\n')).not.toContain(a.key.split('_').at(-1));
  });

  it('when a key is created, then only a hash of its secret is stored', async () => {
    const a = await seedProject(server.sql);
    const secret = a.key.split('_').at(-1) as string;
    const rows = await server.sql`select id, secret_hash from api_keys`;
    const dump = JSON.stringify(rows.map((row) => [row.id, Buffer.from(row.secret_hash).toString('hex')]));
    expect(dump).not.toContain(secret);
  });
});

describe('error shapes', () => {
  it('when the JSON body is malformed, then it is a 400 in the general shape', async () => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).request('POST', '/api/environments', '{"name": ', {});
    expect(response.status).toBe(400);
    expect(response.body).toEqual(generalError);
    expect(response.body.error.message).toContain('malformed JSON');
  });

  it('when the body is over the limit, then it is a 413 in the general shape', async () => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).post('/api/environments', { name: 'x'.repeat(6 * 1024 * 1024), slug: 'big' });
    expect(response.status).toBe(413);
    expect(response.body).toEqual(generalError);
  });

  it('when the path is unknown, then it is a 404 in the general shape', async () => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).get('/api/no-such-thing');
    expect(response.status).toBe(404);
    expect(response.body).toEqual(generalError);
    const outside = await client(server.url).get('/nothing/here');
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual(generalError);
  });

  it('when a field fails validation, then the 400 message names the field', async () => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).post('/api/environments', { name: 'x', slug: '' });
    expect(response.status).toBe(400);
    expect(response.body.error).toContain('body.slug');
  });

  it.each(['0x1F', '1e1', ' 7', '+7', '7.0'])('when a path id is %j, then it is a 400 naming the path id, not a number read some other way', async (id) => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).get(`/api/environments/${encodeURIComponent(id)}`);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('path.id: must be a whole number in decimal digits');
  });

  it.each([
    [
      'a snooze until year 0',
      '/api/snoozes',
      { test_ids: [], snooze_until: '0000-06-01T00:00:00Z' },
      'body.snooze_until: must be a date in the years 1 to 9999',
    ],
    ['a snooze until year 1 that is year 0 in UTC', '/api/snoozes', { test_ids: [], snooze_until: '0001-01-01T00:00:00+05:00' }, 'body.snooze_until'],
  ])('when the body holds %s, then it is a 400 naming the field', async (_what, path, body, words) => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).post(path, body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain(words);
  });

  it('when an analytics window starts in year 0, then it is a 400 naming the query field', async () => {
    const a = await seedProject(server.sql);
    const response = await client(server.url, a.key).get('/api/v1/analytics/test-runs?start_date=0000-01-01&end_date=2026-01-01');
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('query.start_date: must be a date in the years 1 to 9999');
  });
});

describe('users', () => {
  it('when a member reads a user of the project, then it gets the user with connected accounts', async () => {
    const a = await seedProject(server.sql);
    const user = await seedUser(server.sql, [a.projectId]);
    const chat = { user_id: 'U1', user_name: 'ann', real_name: 'Ann Lee', display_name: 'ann', image_url: 'https://img/1', team_id: 'T1' };
    const scm = { user_id: '42', username: 'annlee', display_name: 'Ann Lee', avatar_url: 'https://img/2' };
    await linkAccount(server.sql, user.userId, { kind: 'chat', account: chat });
    await linkAccount(server.sql, user.userId, { kind: 'scm', account: scm });
    const response = await client(server.url, a.key).get(`/api/users/${user.userId}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      id: user.userId,
      email: expect.stringContaining('@example.com'),
      name: expect.any(String),
      picture: '',
      connected_accounts: { chat: [chat], scm: [scm] },
    });
  });

  it('when the user is not in the project, then it is a 404', async () => {
    const a = await seedProject(server.sql);
    const b = await seedProject(server.sql);
    const outsider = await seedUser(server.sql, [b.projectId]);
    expect((await client(server.url, a.key).get(`/api/users/${outsider.userId}`)).status).toBe(404);
  });
});

describe('system', () => {
  it('when the database answers, then /healthz is 200', async () => {
    const response = await client(server.url).get('/healthz');
    expect(response.status).toBe(200);
  });

  it('when the OpenAPI document is read, then it is OpenAPI 3.1 with the routes and their schemas', async () => {
    const document = (await client(server.url).get('/api/openapi.json')).body;
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/api/environments'].post.requestBody).toBeDefined();
    expect(document.paths['/api/users/{id}'].get).toBeDefined();
  });

  it('when migrations run twice, then the second run applies nothing and changes no table', async () => {
    const tables = async () =>
      (await server.sql`select table_name from information_schema.tables where table_schema = 'public' order by 1`).map((r) => r.table_name);
    const before = await tables();
    expect(await migrate(server.sql)).toEqual([]);
    expect(await tables()).toEqual(before);
    const [row] = await server.sql`select count(*)::int as count from schema_migrations`;
    expect(row?.count).toBe(listMigrations().length);
  });

  it('when a variable of the configuration is bad, then the error names it', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ PROCTOR_HTTP_WORKERS: '0' })).toThrow(/PROCTOR_HTTP_WORKERS: Too small/);
    expect(() => loadConfig({ PROCTOR_HTTP_WORKERS: 'two' })).toThrow('PROCTOR_HTTP_WORKERS: must be auto or a whole number from 1 to 64');
    expect(loadConfig({ PROCTOR_HTTP_WORKERS: '3' }).httpWorkers).toBe(3);
    expect(loadConfig({}).httpWorkers).toBe('auto');
  });

  it('when OpenID Connect is configured, then all three settings are needed', () => {
    expect(loadConfig({}).oidc).toBeNull();
    expect(() => loadConfig({ PROCTOR_OIDC_ISSUER: 'https://id.example.com' })).toThrow('set all three, or none');
    expect(() => loadConfig({ PROCTOR_OIDC_ISSUER: 'ftp://id.example.com', PROCTOR_OIDC_CLIENT_ID: 'a', PROCTOR_OIDC_CLIENT_SECRET: 'b' })).toThrow(
      /PROCTOR_OIDC_ISSUER/,
    );
    expect(loadConfig({ PROCTOR_OIDC_ISSUER: 'https://id.example.com', PROCTOR_OIDC_CLIENT_ID: 'a', PROCTOR_OIDC_CLIENT_SECRET: 'b' }).oidc).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'a',
      clientSecret: 'b',
      trustEmailsWithoutClaim: false,
    });
  });

  it('when a bucket is configured, then its settings are read with the standard AWS variables, and an endpoint without a bucket is refused', () => {
    expect(loadConfig({}).s3).toBeNull();
    expect(() => loadConfig({ PROCTOR_S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow('PROCTOR_S3_BUCKET: required when PROCTOR_S3_ENDPOINT is set');
    expect(() => loadConfig({ PROCTOR_S3_BUCKET: 'b' })).toThrow(/PROCTOR_S3_BUCKET/);
    expect(() => loadConfig({ PROCTOR_S3_BUCKET: 'bucket', PROCTOR_S3_PREFIX: 'a b' })).toThrow(/PROCTOR_S3_PREFIX/);
    expect(
      loadConfig({ PROCTOR_S3_BUCKET: 'bucket', PROCTOR_S3_ENDPOINT: 'http://127.0.0.1:9000/', PROCTOR_S3_PREFIX: '/ci/proctor', AWS_REGION: 'eu-west-3' }).s3,
    ).toEqual({
      bucket: 'bucket',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
      prefix: 'ci/proctor/',
      credentials: null,
    });
    const withKeys = loadConfig({ PROCTOR_S3_BUCKET: 'bucket', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' }).s3;
    expect(withKeys).toMatchObject({ endpoint: null, region: 'us-east-1', prefix: '', credentials: { accessKeyId: 'id', secretAccessKey: 'secret' } });
  });
});

describe('embedded data directory', () => {
  it('when a second server opens a data directory in use, then it refuses with a clear message', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-lock-'));
    const env = { DATABASE_URL: '', PROCTOR_DATA_DIR: dataDir, PROCTOR_DEMO: 'false' };
    const port = await freePort();
    const first = spawnProctor(['serve'], { ...env, PORT: String(port) });
    try {
      await waitForHealth(`http://127.0.0.1:${port}`);
      const second = spawnProctor(['serve'], { ...env, PORT: String(await freePort()) });
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`the data directory ${dataDir} is in use by another Proctor process`);
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('when the CLI runs while the server serves the embedded database, then it works through the server', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-cli-'));
    const env = { DATABASE_URL: '', PROCTOR_DATA_DIR: dataDir, PROCTOR_DEMO: 'false' };
    const port = await freePort();
    const server = spawnProctor(['serve'], { ...env, PORT: String(port) });
    try {
      await waitForHealth(`http://127.0.0.1:${port}`);
      const project = spawnProctor(['project', 'create', '--name', 'Shop', '--repo', 'https://github.com/acme/shop.git'], env);
      expect(await project.exited).toBe(0);
      const projectId = project.output().trim();
      expect(projectId).toMatch(/^\d+$/);
      const key = spawnProctor(['key', 'create', '--project', projectId], env);
      expect(await key.exited).toBe(0);
      const plain = key.output().trim();
      expect(plain).toMatch(/^prc_p_/);
      const response = await client(`http://127.0.0.1:${port}`, plain).post('/api/environments', { name: 'Prod', slug: 'prod' });
      expect(response.status).toBe(201);
      expect(response.body.data.environment.project_id).toBe(Number(projectId));
      // The database is reached through a Unix socket in a folder of the server's user alone, and its files are that user's alone.
      const lock = JSON.parse(fs.readFileSync(path.join(dataDir, 'server.lock'), 'utf8'));
      expect(Object.keys(lock).sort()).toEqual(['pid', 'socketDir', 'startedAt']);
      expect(fs.statSync(lock.socketDir).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(dataDir, 'server.lock')).mode & 0o077).toBe(0);
      expect(fs.statSync(path.join(dataDir, 'pgdata')).mode & 0o777).toBe(0o700);
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o711);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited, `${server.child.signalCode ?? ''} ${server.output()}`).toBe(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
