// A release's upgrade fixture, made by that release: `npx tsx test/upgrade/make-fixture.ts` (on
// DATABASE_URL for the PostgreSQL half) writes test/fixtures/releases/<version>/, a folder per
// database: the data directory as the server left it (the embedded database's files, the stored
// files), for PostgreSQL also its pg_dump, what the API answered (expected.json) and the fixture's
// keys and session (secrets.json). Every later version must read it back the same
// (test/upgrade/upgrade.test.ts). Run it once per release, on the release's commit.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from '../../server/src/db.ts';
import { embeddedUrl, readLiveLock } from '../../server/src/embedded.ts';
import { throwawayDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { freePort, type ServerProcess, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { printedKey } from '../helpers/release.ts';
import { populate, readBack } from './fixture.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const today = new Date().toISOString().slice(0, 10);

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

/** Reads until two reads in a row agree: the rollups and deliveries a run's end starts have then settled. */
async function settledReadBack(url: string, key: string): Promise<Record<string, unknown>> {
  const api = client(url, key);
  let last = '';
  for (let attempt = 0; attempt < 60; attempt++) {
    const answers = await readBack(url, api, { from: today, to: today });
    const text = JSON.stringify(answers);
    const deliveries = Object.entries(answers)
      .filter(([path]) => path.startsWith('/api/notification-deliveries'))
      .flatMap(([, answer]) => (answer as { data: { deliveries: { state: string }[] } }).data.deliveries);
    if (text === last && deliveries.length > 0 && deliveries.every((d) => d.state === 'delivered')) return answers;
    last = text;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error('the fixture did not settle in a minute');
}

/** A session lasts two weeks; the fixture's must still sign in when a release years later starts on it. */
async function keepSessionsValid(databaseUrl: string): Promise<void> {
  const sql = connect(databaseUrl, 1);
  try {
    await sql`update sessions set expires_at = '2099-01-01T00:00:00Z'`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function make(kind: 'embedded' | 'postgresql', into: string): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `proctor-fixture-${kind}-`));
  const db = kind === 'postgresql' ? await throwawayDatabase(process.env.DATABASE_URL as string, { prefix: 'proctor_fixture', migrated: false }) : null;
  const receiver = await startReceiver();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { PROCTOR_DATA_DIR: dataDir, DATABASE_URL: db?.url ?? '', PORT: String(port), PUBLIC_URL: url, PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' };
  const server = spawnProctor(['serve'], { ...env, PROCTOR_EXECUTOR_CONCURRENCY: '0' });
  try {
    await waitForHealth(url);
    const key = await printedKey(server);
    const signInLink = /\/sign-in\/link\?token=[\w-]+/.exec(server.output())?.[0] as string;
    const secrets = await populate(url, key, signInLink, `${receiver.url}/hook`);
    const expected = await settledReadBack(url, key);
    await keepSessionsValid(db?.url ?? embeddedUrl((readLiveLock(dataDir) as { socketDir: string }).socketDir));
    await stop(server);
    fs.mkdirSync(into, { recursive: true });
    execFileSync('tar', ['czf', path.join(into, 'data.tar.gz'), '--exclude=./server.lock', '--exclude=./socket', '-C', dataDir, '.']);
    if (db) execFileSync('sh', ['-c', `pg_dump --no-owner --no-privileges "${db.url}" | gzip -9 > "${path.join(into, 'dump.sql.gz')}"`]);
    fs.writeFileSync(path.join(into, 'expected.json'), `${JSON.stringify({ version, days: { from: today, to: today }, answers: expected }, null, 2)}\n`);
    fs.writeFileSync(path.join(into, 'secrets.json'), `${JSON.stringify(secrets, null, 2)}\n`);
    console.log(`${kind}: ${into}`);
  } finally {
    if (server.child.exitCode === null) await stop(server);
    await receiver.close();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const folder = path.join(ROOT, 'test/fixtures/releases', version);
await make('embedded', path.join(folder, 'embedded'));
if (process.env.DATABASE_URL) await make('postgresql', path.join(folder, 'postgresql'));
else console.log('postgresql: skipped (no DATABASE_URL)');
