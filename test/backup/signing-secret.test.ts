import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBackup } from '../../server/src/backup/backup.ts';
import { restoreBackup } from '../../server/src/backup/restore.ts';
import { readTar, TarWriter } from '../../server/src/backup/tar.ts';
import { loadConfig } from '../../server/src/config.ts';
import { openDatabase } from '../../server/src/db.ts';
import { checkSummaryToken, summaryToken } from '../../server/src/runs/present.ts';
import { FileStorage } from '../../server/src/storage/blobs.ts';
import { resolveSigningSecret } from '../../server/src/system/store.ts';
import { createTestDatabase, throwawayDatabase } from '../helpers/database.ts';
import { seedProjectWithEnvironment, seedRun } from '../helpers/server.ts';

// A backup leaves the URL-signing secret out (docs/decisions/backup-signing-secret.md): a restore
// makes a new one, so a link signed before it no longer opens, and one signed after it does.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-secret-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

let archive: string;
let secret: string;
let runId: number;
const now = new Date();

beforeAll(async () => {
  const db = await createTestDatabase();
  try {
    secret = await resolveSigningSecret(db.sql, null);
    const { projectId, environmentId } = await seedProjectWithEnvironment(db.sql, 'staging');
    runId = await seedRun(db.sql, projectId, environmentId);
    archive = path.join(scratch, 'backup.tar.gz');
    const storage = new FileStorage(path.join(scratch, 'source-files'));
    await writeBackup({ sql: db.sql, embedded: db.embedded, storage, storageKind: 'files', proctorVersion: '0.0.0-test' }, archive);
  } finally {
    await db.drop();
  }
}, 120_000);

/** Restores the archive into an empty target and answers the target's signing secret. */
async function restoredSecret(file: string, name: string): Promise<string> {
  const adminUrl = process.env.DATABASE_URL;
  const target = adminUrl ? await throwawayDatabase(adminUrl, { prefix: 'proctor_secret', migrated: false }) : null;
  const config = loadConfig({ PROCTOR_DATA_DIR: path.join(scratch, name), DATABASE_URL: target?.url ?? '' });
  try {
    await restoreBackup(file, config);
    const db = await openDatabase(config);
    try {
      return await resolveSigningSecret(db.sql, null);
    } finally {
      await db.close();
    }
  } finally {
    await target?.drop();
  }
}

describe('the URL-signing secret and backups', () => {
  it('when a backup is taken, then the secret is not in it', () => {
    expect(secret.length).toBeGreaterThan(20);
    expect(gunzipSync(fs.readFileSync(archive)).includes(Buffer.from(secret))).toBe(false);
  });

  it('when it is restored, then a new secret is made: a run link signed before no longer opens, one signed after does', async () => {
    const renewed = await restoredSecret(archive, 'restored');
    expect(renewed).not.toBe(secret);
    expect(checkSummaryToken(renewed, runId, summaryToken(secret, runId, now), now)).toBe('invalid');
    expect(checkSummaryToken(renewed, runId, summaryToken(renewed, runId, now), now)).toBe('ok');
  }, 120_000);

  it('when an archive of an earlier version holds the secret, then the restore makes a new one all the same', async () => {
    const entries: { name: string; content: Buffer }[] = [];
    for await (const entry of readTar(Readable.from([fs.readFileSync(archive)]).pipe(createGunzip()))) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry.content) chunks.push(chunk);
      entries.push({ name: entry.name, content: Buffer.concat(chunks) });
    }
    const settings = entries.find((entry) => entry.name === 'database/settings/000001.json');
    const rows = settings ? (JSON.parse(settings.content.toString()) as { name: string; value: string }[]) : [];
    rows.push({ name: 'signing_secret', value: secret });
    const summary = entries.find((entry) => entry.name === 'summary.json') as { content: Buffer };
    const counts = JSON.parse(summary.content.toString()) as { tables: Record<string, number> };
    counts.tables.settings = rows.length;
    summary.content = Buffer.from(JSON.stringify(counts));
    const page = { name: 'database/settings/000001.json', content: Buffer.from(JSON.stringify(rows)) };
    const withSecret = settings ? entries.map((entry) => (entry === settings ? page : entry)) : [entries[0] as never, page, ...entries.slice(1)];
    const chunks: Buffer[] = [];
    const tar = new TarWriter(
      new Writable({
        write(chunk, _encoding, done) {
          chunks.push(chunk);
          done();
        },
      }),
    );
    for (const entry of withSecret) await tar.add(entry.name, entry.content);
    await tar.finish();
    const older = path.join(scratch, 'older.tar.gz');
    fs.writeFileSync(older, gzipSync(Buffer.concat(chunks)));
    expect(gunzipSync(fs.readFileSync(older)).includes(Buffer.from(secret))).toBe(true);

    const renewed = await restoredSecret(older, 'restored-older');
    expect(renewed).not.toBe(secret);
  }, 120_000);
});
