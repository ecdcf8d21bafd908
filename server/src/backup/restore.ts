import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Config } from '../config.ts';
import { openDatabase, type Sql, type Tx } from '../db.ts';
import { applyMigration, listMigrations } from '../migrate.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { openStorage } from '../storage/open.ts';
import { type BackupHeader, type BackupSummary, FILES_DIR, HEADER_ENTRY, parseHeader, RestoreRefused, SUMMARY_ENTRY, tableOfEntry } from './format.ts';
import { advanceIdentity, insertRows, type TableShape, tableShapes } from './tables.ts';
import { ArchiveError, readTar, type TarEntry } from './tar.ts';

// `proctor restore FILE`: a backup into an empty data directory or database, whole or not at all.
// Everything goes in one transaction: the schema the backup was made with (its migrations), its
// rows, then the migrations this version adds (a backup of an older release is upgraded as it is
// restored). Stored bytes written before a failure are removed again, and a data directory the
// restore made is removed with them.

export interface RestoreReport {
  header: BackupHeader;
  summary: BackupSummary;
  /** The migrations applied after the backup's rows: what upgraded it to this version. */
  upgradedWith: string[];
}

export async function restoreBackup(file: string, config: Config): Promise<RestoreReport> {
  try {
    return await restoreInto(file, config);
  } catch (error) {
    // gzip's own errors: the file ends early or is not gzip at all.
    if (String((error as { code?: unknown }).code).startsWith('Z_')) throw new ArchiveError(`the archive is cut off or corrupt (${(error as Error).message})`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && (error as NodeJS.ErrnoException).path === file) throw new RestoreRefused(`no file ${file}`);
    throw error;
  }
}

async function restoreInto(file: string, config: Config): Promise<RestoreReport> {
  refuseUnlessEmptyDataDir(config);
  const entries = readTar(fs.createReadStream(file).pipe(createGunzip()));
  const first = await entries.next();
  if (first.done || first.value.name !== HEADER_ENTRY) throw new RestoreRefused(`${file} is not a Proctor backup: it does not start with ${HEADER_ENTRY}`);
  const known = listMigrations();
  const header = parseHeader(
    await text(first.value),
    known.map((m) => m.name),
  );

  const madeDataDir = !fs.existsSync(config.dataDir);
  const db = await openDatabase(config);
  const storage = await openStorage(config);
  const written: string[] = [];
  try {
    await refuseUnlessNoTables(db.sql);
    refuseUnlessEmptyFileStorage(config);
    const report = await db.sql.begin(async (tx) => {
      for (const migration of known.slice(0, header.migrations.length)) await applyMigration(tx, migration);
      const summary = await loadEntries(tx, entries, storage, written);
      const upgradedWith: string[] = [];
      for (const migration of known.slice(header.migrations.length)) if (await applyMigration(tx, migration)) upgradedWith.push(migration.name);
      return { header, summary, upgradedWith };
    });
    await db.close();
    return report;
  } catch (error) {
    for (const key of written) await storage.remove(key).catch(() => undefined);
    await db.close().catch(() => undefined);
    if (!config.databaseUrl) emptyDataDir(config.dataDir, madeDataDir);
    throw error;
  }
}

/** The rows and bytes of the archive, then its summary, held against what was loaded. */
async function loadEntries(tx: Tx, entries: AsyncGenerator<TarEntry>, storage: BlobStorage, written: string[]): Promise<BackupSummary> {
  const shapes = new Map((await tableShapes(tx)).map((shape) => [shape.name, shape]));
  const loaded: BackupSummary = { tables: {}, files: { count: 0, bytes: 0, removed_meanwhile: 0 } };
  for await (const entry of entries) {
    const table = tableOfEntry(entry.name);
    if (table !== null) {
      const shape = shapes.get(table);
      if (!shape) throw new ArchiveError(`the archive holds rows of a table its schema does not have: ${table}`);
      loaded.tables[table] = (loaded.tables[table] ?? 0) + (await insertRows(tx, shape, await text(entry)));
    } else if (entry.name.startsWith(FILES_DIR)) {
      const key = entry.name.slice(FILES_DIR.length);
      written.push(key);
      await storage.write(key, Readable.from(entry.content), { maxBytes: Number.MAX_SAFE_INTEGER, exactBytes: entry.size });
      loaded.files.count++;
      loaded.files.bytes += entry.size;
    } else if (entry.name === SUMMARY_ENTRY) {
      const summary = JSON.parse(await text(entry)) as BackupSummary;
      checkAgainst(summary, loaded, shapes);
      for (const shape of shapes.values()) await advanceIdentity(tx, shape);
      return summary;
    } else {
      throw new ArchiveError(`the archive holds an entry a backup never writes: ${entry.name}`);
    }
  }
  throw new ArchiveError(`the archive is cut off: it has no ${SUMMARY_ENTRY}`);
}

function checkAgainst(summary: BackupSummary, loaded: BackupSummary, shapes: Map<string, TableShape>): void {
  for (const table of shapes.keys()) {
    const expected = summary.tables[table] ?? 0;
    if ((loaded.tables[table] ?? 0) !== expected)
      throw new ArchiveError(`the archive's ${table} holds ${loaded.tables[table] ?? 0} rows, not the ${expected} it says`);
  }
  if (loaded.files.count !== summary.files.count || loaded.files.bytes !== summary.files.bytes) {
    throw new ArchiveError(`the archive holds ${loaded.files.count} files (${loaded.files.bytes} bytes), not the ${summary.files.count} it says`);
  }
}

async function text(entry: TarEntry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of entry.content) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const isEmptyDir = (dir: string) => !fs.existsSync(dir) || fs.readdirSync(dir).length === 0;

/** A restore writes only where nothing is: an empty (or missing) data directory for the embedded database, ... */
function refuseUnlessEmptyDataDir(config: Config): void {
  if (!config.databaseUrl && !isEmptyDir(config.dataDir))
    throw new RestoreRefused(`the data directory ${config.dataDir} is not empty: restore into an empty one (PROCTOR_DATA_DIR)`);
}

/** ... a database with no tables (the embedded one of an empty data directory has none), ... */
async function refuseUnlessNoTables(sql: Sql): Promise<void> {
  const [row] = await sql<{ tables: number }[]>`
    select count(*)::int as tables from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p')`;
  if ((row?.tables ?? 0) > 0) throw new RestoreRefused(`the database of DATABASE_URL has ${row?.tables} tables: restore into an empty database`);
}

/** ... and with PostgreSQL, an empty file storage in the data directory. */
function refuseUnlessEmptyFileStorage(config: Config): void {
  if (config.databaseUrl && !config.s3 && !isEmptyDir(path.join(config.dataDir, 'files'))) {
    throw new RestoreRefused(`the file storage ${path.join(config.dataDir, 'files')} is not empty: restore into an empty data directory (PROCTOR_DATA_DIR)`);
  }
}

function emptyDataDir(dataDir: string, made: boolean): void {
  if (made) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    return;
  }
  for (const entry of fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : []) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
}
