import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBackup } from '../../server/src/backup/backup.ts';
import { describeRestore } from '../../server/src/backup/describe.ts';
import { RestoreRefused } from '../../server/src/backup/format.ts';
import { restoreBackup } from '../../server/src/backup/restore.ts';
import { ArchiveError, readTar, TarWriter } from '../../server/src/backup/tar.ts';
import { loadConfig } from '../../server/src/config.ts';
import { createResource } from '../../server/src/resources/store.ts';
import { FileStorage } from '../../server/src/storage/blobs.ts';
import { createTestDatabase, throwawayDatabase } from '../helpers/database.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedProject, seedUser } from '../helpers/server.ts';

// Archives that are not whole, or not a backup's, made from a real backup: `proctor restore`
// refuses each in one line (no stack trace) and writes nothing, into an empty data directory, or
// an empty PostgreSQL database when DATABASE_URL is set.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-malformed-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

interface Entry {
  name: string;
  content: Buffer;
}

let whole: Buffer;
let entries: Entry[];

beforeAll(async () => {
  const db = await createTestDatabase();
  try {
    const { projectId } = await seedProject(db.sql, 'Shop');
    await seedUser(db.sql, [projectId]);
    const storage = new FileStorage(path.join(scratch, 'source-files'));
    const key = storage.newKey();
    const bytes = randomBytes(3000);
    await storage.write(key, Readable.from([bytes]), { maxBytes: bytes.length, exactBytes: bytes.length });
    const resource = { name: 'a.bin', description: null, mimeType: null, sizeBytes: bytes.length, externalUrl: null, accessLevel: null, createdBy: null };
    await createResource(db.sql, projectId, { ...resource, storageKey: key }, new Date());
    const archive = path.join(scratch, 'whole.tar.gz');
    await writeBackup({ sql: db.sql, embedded: db.embedded, storage, storageKind: 'files', proctorVersion: '0.0.0-test' }, archive);
    whole = fs.readFileSync(archive);
    entries = [];
    for await (const entry of readTar(Readable.from([whole]).pipe(createGunzip()))) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry.content) chunks.push(chunk);
      entries.push({ name: entry.name, content: Buffer.concat(chunks) });
    }
  } finally {
    await db.drop();
  }
}, 120_000);

/** The entries as a tar, as a backup writes it (not gzipped). */
async function tarOf(list: Entry[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  const tar = new TarWriter(out);
  for (const entry of list) await tar.add(entry.name, entry.content);
  await tar.finish();
  return Buffer.concat(chunks);
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const named = (name: string) => entries.find((entry) => entry.name === name) as Entry;
const headerJson = () => JSON.parse(named('proctor-backup.json').content.toString()) as Record<string, unknown>;
const summaryJson = () => JSON.parse(named('summary.json').content.toString()) as { tables: Record<string, number>; files: Record<string, number> };
const replaced = (name: string, content: Buffer) => entries.map((entry) => (entry.name === name ? { name, content } : entry));
const firstPageOf = (table: string) => `database/${table}/000001.json`;
const fileEntry = () => entries.find((entry) => entry.name.startsWith('files/')) as Entry;

/** Each crafted archive (its bytes, as a file would hold them) and what the refusal says. */
const cases: [string, () => Promise<Buffer>, RegExp][] = [
  ['a file that is not gzip', async () => Buffer.from('not a backup at all\n'), /cut off or corrupt \(incorrect header check\)/],
  ['an empty file', async () => Buffer.alloc(0), /cut off or corrupt \(unexpected end of file\)/],
  ['a tar that is not gzipped', async () => tarOf(entries), /cut off or corrupt \(incorrect header check\)/],
  ['gzip cut off', async () => whole.subarray(0, Math.floor(whole.length * 0.6)), /cut off or corrupt \(unexpected end of file\)/],
  [
    'gzip whose bytes are damaged in the middle',
    async () => {
      const bad = Buffer.from(whole);
      for (let i = Math.floor(bad.length / 2); i < Math.floor(bad.length / 2) + 16; i++) bad[i] = (bad[i] as number) ^ 0xff;
      return bad;
    },
    /cut off or corrupt|bad tar header|not JSON|cut off inside/,
  ],
  [
    'a tar cut inside a stored file, gzipped whole',
    async () => {
      const tar = await tarOf(entries);
      return gzipSync(tar.subarray(0, tar.indexOf(Buffer.from(fileEntry().name)) + 512 + 100));
    },
    /cut off inside "files\/[0-9a-f]{32}"/,
  ],
  ['a tar without its end', async () => gzipSync((await tarOf(entries)).subarray(0, -1024)), /cut off: it has no end marker/],
  [
    'a tar header whose size is altered',
    async () => {
      const tar = await tarOf(entries);
      const at = tar.indexOf(Buffer.from(fileEntry().name));
      tar.write('00000000001', at + 124, 'latin1');
      return gzipSync(tar);
    },
    /bad tar header \("files\/[0-9a-f]{32}"\)/,
  ],
  [
    'a header that is not JSON',
    async () => gzipSync(await tarOf(replaced('proctor-backup.json', Buffer.from('{"format": "proctor-')))),
    /its header is not JSON/,
  ],
  ['a header of JSON null', async () => gzipSync(await tarOf(replaced('proctor-backup.json', json(null)))), /its header names another format/],
  [
    'a header of a later format version',
    async () => gzipSync(await tarOf(replaced('proctor-backup.json', json({ ...headerJson(), format_version: 2 })))),
    /a Proctor backup of format 2, which this version cannot read/,
  ],
  [
    'a header without its migrations',
    async () => gzipSync(await tarOf(replaced('proctor-backup.json', json({ ...headerJson(), migrations: undefined })))),
    /header is not a Proctor backup's \(migrations: /,
  ],
  [
    'a header whose migrations are not names',
    async () => gzipSync(await tarOf(replaced('proctor-backup.json', json({ ...headerJson(), migrations: [1, 2] })))),
    /header is not a Proctor backup's \(migrations\.0: /,
  ],
  [
    'a header naming a migration this version does not know',
    async () => gzipSync(await tarOf(replaced('proctor-backup.json', json({ ...headerJson(), migrations: ['999_later.sql'] })))),
    /whose schema this version does not know \("999_later.sql"\)/,
  ],
  [
    'an archive that does not start with its header',
    async () => gzipSync(await tarOf(entries.slice(1))),
    /is not a Proctor backup: it does not start with proctor-backup.json/,
  ],
  [
    'a page of rows whose JSON is cut',
    async () => gzipSync(await tarOf(replaced(firstPageOf('projects'), named(firstPageOf('projects')).content.subarray(0, 40)))),
    /the archive's database\/projects\/000001.json is not JSON \(cut off or corrupt\)/,
  ],
  [
    'a page that is not an array of rows',
    async () => gzipSync(await tarOf(replaced(firstPageOf('projects'), json({ id: 1 })))),
    /database\/projects\/000001.json is not an array of rows/,
  ],
  [
    'a table missing',
    async () => gzipSync(await tarOf(entries.filter((entry) => !entry.name.startsWith('database/projects/')))),
    /the archive's projects holds 0 rows, not the 1 it says/,
  ],
  [
    'a table missing, and the summary made to agree',
    async () => {
      const summary = summaryJson();
      summary.tables.projects = 0;
      return gzipSync(await tarOf(replaced('summary.json', json(summary)).filter((entry) => !entry.name.startsWith('database/projects/'))));
    },
    /database\/\w+\/000001.json" holds rows the database refuses: .*foreign key/,
  ],
  [
    'the same rows twice',
    async () => {
      const summary = summaryJson();
      summary.tables.projects = 2;
      const list = replaced('summary.json', json(summary));
      const at = list.findIndex((entry) => entry.name === firstPageOf('projects'));
      list.splice(at + 1, 0, { name: 'database/projects/000002.json', content: named(firstPageOf('projects')).content });
      return gzipSync(await tarOf(list));
    },
    /database\/projects\/000002.json" holds rows the database refuses: duplicate key/,
  ],
  [
    'a row with a value of the wrong type',
    async () => {
      const rows = JSON.parse(named(firstPageOf('projects')).content.toString()) as Record<string, unknown>[];
      return gzipSync(await tarOf(replaced(firstPageOf('projects'), json(rows.map((row) => ({ ...row, created_at: 'not a time' }))))));
    },
    /database\/projects\/000001.json" holds rows the database refuses: invalid input syntax for type timestamp/,
  ],
  [
    'rows of a table this schema does not have',
    async () => {
      const summary = summaryJson();
      summary.tables.no_such_table = 1;
      return gzipSync(
        await tarOf([
          ...replaced('summary.json', json(summary)).slice(0, 1),
          { name: firstPageOf('no_such_table'), content: json([{ id: 1 }]) },
          ...replaced('summary.json', json(summary)).slice(1),
        ]),
      );
    },
    /rows of a table its schema does not have: no_such_table/,
  ],
  [
    'a file whose path leaves the folder',
    async () => gzipSync(await tarOf(entries.map((entry) => (entry.name.startsWith('files/') ? { ...entry, name: 'files/../../escaped' } : entry)))),
    /a file a backup never writes \(its name could leave the storage folder\): "files\/..\/..\/escaped"/,
  ],
  [
    'a file of an absolute path',
    async () =>
      gzipSync(await tarOf(entries.map((entry) => (entry.name.startsWith('files/') ? { ...entry, name: `files/${path.join(scratch, 'absolute')}` } : entry)))),
    /a file a backup never writes/,
  ],
  [
    'an entry outside every folder of a backup',
    async () => gzipSync(await tarOf([...entries.slice(0, 1), { name: '../escaped', content: Buffer.from('x') }, ...entries.slice(1)])),
    /an entry a backup never writes: "..\/escaped"/,
  ],
  [
    'a summary that is not JSON',
    async () => gzipSync(await tarOf(replaced('summary.json', named('summary.json').content.subarray(0, 30)))),
    /the archive's summary.json is not JSON/,
  ],
  ['a summary without its tables', async () => gzipSync(await tarOf(replaced('summary.json', json({})))), /summary.json is not a backup's summary \(tables: /],
  [
    'a summary that counts other files',
    async () => gzipSync(await tarOf(replaced('summary.json', json({ ...summaryJson(), files: { count: 2, bytes: 3000, removed_meanwhile: 0 } })))),
    /holds 1 files \(3000 bytes\), not the 2 \(3000 bytes\) it says/,
  ],
  ['no summary', async () => gzipSync(await tarOf(entries.filter((entry) => entry.name !== 'summary.json'))), /cut off: it has no summary.json/],
  [
    'an entry after the summary',
    async () => gzipSync(await tarOf([...entries, { name: firstPageOf('projects'), content: named(firstPageOf('projects')).content }])),
    /an entry after its summary.json: "database\/projects\/000001.json"/,
  ],
];

/** An empty target, and whether it is still empty: a data directory, and with DATABASE_URL a database without tables. */
async function emptyTarget(name: string) {
  const dataDir = path.join(scratch, 'targets', name.replace(/\W+/g, '-'));
  const adminUrl = process.env.DATABASE_URL;
  const db = adminUrl ? await throwawayDatabase(adminUrl, { prefix: 'proctor_malformed', migrated: false }) : null;
  return {
    env: { PROCTOR_DATA_DIR: dataDir, DATABASE_URL: db?.url ?? '' },
    written: async () => {
      const files = fs.existsSync(dataDir) ? fs.readdirSync(dataDir, { recursive: true }) : [];
      const tables = db ? await db.sql<{ name: string }[]>`select tablename as name from pg_tables where schemaname = current_schema()` : [];
      return [...files.map(String), ...tables.map((table) => table.name)];
    },
    drop: async () => db?.drop(),
  };
}

/** The crafted archive of a case, written to a file of its own. */
async function crafted(name: string): Promise<string> {
  const archive = path.join(scratch, `${name.replace(/\W+/g, '-')}.tar.gz`);
  const [, craft] = cases.find(([named]) => named === name) as (typeof cases)[number];
  if (!fs.existsSync(archive)) fs.writeFileSync(archive, await craft());
  return archive;
}

const nothingEscaped = () => [path.join(scratch, 'escaped'), path.join(scratch, 'absolute')].filter((file) => fs.existsSync(file));

describe('restoring an archive that is not whole, or not a backup', () => {
  it('when the whole archive is restored, then it is (the crafted ones below differ from it in one thing)', async () => {
    const archive = path.join(scratch, 'whole-again.tar.gz');
    fs.writeFileSync(archive, gzipSync(await tarOf(entries)));
    const target = await emptyTarget('whole');
    try {
      const report = await restoreBackup(archive, loadConfig(target.env));
      expect(describeRestore(report)).toMatch(/^restored \d+ rows and 1 stored files \(3000 bytes\) from Proctor 0\.0\.0-test's backup/);
    } finally {
      await target.drop();
    }
  }, 120_000);

  // The restore the command runs, in this process: each refusal is one the command prints as one line, alone.
  it.each(cases)(
    'when it is %s, then the restore is refused in one line and nothing is written',
    async (name, _craft, says) => {
      const archive = await crafted(name);
      const target = await emptyTarget(name);
      try {
        const refused = await restoreBackup(archive, loadConfig(target.env)).then(
          () => null,
          (error: unknown) => error as Error,
        );
        expect(refused, 'restored').not.toBeNull();
        expect(refused instanceof RestoreRefused || refused instanceof ArchiveError, refused?.stack).toBe(true);
        expect(refused?.message).not.toContain('\n');
        expect(refused?.message).toMatch(says);
        expect(await target.written()).toEqual([]);
        expect(nothingEscaped()).toEqual([]);
      } finally {
        await target.drop();
      }
    },
    120_000,
  );

  // The command itself: a refusal of gunzip's, and two that printed a stack trace before (a stored file's name, a page's JSON cut).
  it.each(['gzip whose bytes are damaged in the middle', 'a file whose path leaves the folder', 'a page of rows whose JSON is cut'])(
    'when `proctor restore` is given %s, then it prints one line, no stack trace, and exits 1',
    async (name) => {
      const says = (cases.find(([named]) => named === name) as (typeof cases)[number])[2];
      const target = await emptyTarget(`cli ${name}`);
      try {
        const restore = spawnProctor(['restore', await crafted(name)], target.env);
        const code = await restore.exited;
        const output = restore.output();
        expect(code, output).toBe(1);
        expect(output.trimEnd().split('\n'), output).toHaveLength(1);
        expect(output).toMatch(/^proctor: /);
        expect(output).toMatch(says);
        expect(await target.written()).toEqual([]);
        expect(nothingEscaped()).toEqual([]);
      } finally {
        await target.drop();
      }
    },
    120_000,
  );
});
