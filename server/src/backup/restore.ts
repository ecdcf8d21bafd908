import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type Config, randomSecret } from '../config.ts';
import { openDatabase, type Sql, type Tx } from '../db.ts';
import { applyMigration, listMigrations } from '../migrate.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { openStorage } from '../storage/open.ts';
import { archiveEntries, checkArchive, readHeader, text } from './check.ts';
import { type BackupHeader, type BackupSummary, FILE_KEY, FILES_DIR, LEFT_OUT, parseSummary, RestoreRefused, SUMMARY_ENTRY, tableOfEntry } from './format.ts';
import { advanceIdentity, insertRows, type TableShape, tableShapes } from './tables.ts';
import { ArchiveError, shownName, type TarEntry } from './tar.ts';

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
    if ((error as NodeJS.ErrnoException).path === file) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new RestoreRefused(code === 'ENOENT' ? `no file ${file}` : `${file} cannot be read (${code})`);
    }
    throw error;
  }
}

async function restoreInto(file: string, config: Config): Promise<RestoreReport> {
  refuseUnlessEmptyDataDir(config);
  const known = listMigrations();
  const header = await checkArchive(
    file,
    known.map((m) => m.name),
  );
  const entries = archiveEntries(file);
  await readHeader(
    file,
    entries,
    known.map((m) => m.name),
  );

  const madeDataDir = !fs.existsSync(config.dataDir);
  const madeFilesDir = !fs.existsSync(path.join(config.dataDir, 'files'));
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
      await renewSigningSecret(tx);
      return { header, summary, upgradedWith };
    });
    await db.close();
    return report;
  } catch (error) {
    for (const key of written) await storage.remove(key).catch(() => undefined);
    await db.close().catch(() => undefined);
    if (!config.databaseUrl) emptyDataDir(config.dataDir, madeDataDir);
    else if (madeDataDir) fs.rmSync(config.dataDir, { recursive: true, force: true });
    else if (madeFilesDir && !config.s3) fs.rmSync(path.join(config.dataDir, 'files'), { recursive: true, force: true });
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
      const page = await text(entry);
      const shape = shapes.get(table);
      if (!shape) throw new ArchiveError(`the archive holds rows of a table its schema does not have: ${table}`);
      loaded.tables[table] = (loaded.tables[table] ?? 0) + (await refusedAsArchive(entry, () => insertRows(tx, shape, page)));
    } else if (entry.name.startsWith(FILES_DIR)) {
      const key = entry.name.slice(FILES_DIR.length);
      if (!FILE_KEY.test(key)) throw new ArchiveError(`the archive holds a file a backup never writes: ${shownName(entry.name)}`);
      written.push(key);
      await storage.write(key, Readable.from(entry.content), { maxBytes: Number.MAX_SAFE_INTEGER, exactBytes: entry.size });
      loaded.files.count++;
      loaded.files.bytes += entry.size;
    } else if (entry.name === SUMMARY_ENTRY) {
      const summary = parseSummary(await text(entry));
      checkAgainst(summary, loaded, shapes);
      for (const shape of shapes.values()) await advanceIdentity(tx, shape);
      return summary;
    } else {
      throw new ArchiveError(`the archive holds an entry a backup never writes: ${shownName(entry.name)}`);
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

/**
 * A new secret to sign URLs with: a backup leaves the old one out, and an archive of an earlier
 * version that holds it may have been read by anyone who held it.
 */
async function renewSigningSecret(tx: Tx): Promise<void> {
  await tx.unsafe(`delete from settings where ${LEFT_OUT.settings}`);
  await tx`insert into settings (name, value) values ('signing_secret', ${randomSecret()})`;
}

/**
 * Rows the database refuses (a value of the wrong type, a duplicate key, a reference to nothing):
 * the archive's fault, said in one line with its entry; the transaction leaves nothing.
 */
async function refusedAsArchive<T>(entry: TarEntry, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if ((error as Error).name !== 'PostgresError' || typeof code !== 'string' || !/^2[23]/.test(code)) throw error;
    throw new ArchiveError(`the archive's ${shownName(entry.name)} holds rows the database refuses: ${(error as Error).message.replace(/\s+/g, ' ')}`);
  }
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
