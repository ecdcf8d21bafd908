import fs from 'node:fs';
import { createGzip } from 'node:zlib';
import type { Sql, Tx } from '../db.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { type BackupHeader, type BackupSummary, FILES_DIR, HEADER_ENTRY, LEFT_OUT, pageEntry, SUMMARY_ENTRY, storedByteTables } from './format.ts';
import { pageOfRows, tableShapes } from './tables.ts';
import { TarWriter } from './tar.ts';

// `proctor backup`: one archive of a consistent snapshot while the server keeps serving. The rows
// are read in one repeatable-read transaction (every table as of one moment), then the bytes its
// rows lead to are copied. Bytes are written once under a key and never changed, so the copy is
// the snapshot's; a file that retention removed meanwhile is counted, not invented.

const PAGE_ROWS = 1000;

export interface BackupSource {
  sql: Sql;
  embedded: boolean;
  storage: BlobStorage;
  /** The storage's kind: the bytes of S3 stay in the bucket (versioned or backed up by its own means). */
  storageKind: 'files' | 's3';
  proctorVersion: string;
}

export async function writeBackup(source: BackupSource, out: string): Promise<BackupSummary> {
  const partial = `${out}.partial`;
  const gzip = createGzip();
  const file = fs.createWriteStream(partial, { mode: 0o600 });
  const piped = new Promise<void>((resolve, reject) => {
    gzip.pipe(file);
    file.once('finish', resolve);
    file.once('error', reject);
    gzip.once('error', reject);
  });
  const tar = new TarWriter(gzip);
  try {
    const summary: BackupSummary = { tables: {}, files: { count: 0, bytes: 0, removed_meanwhile: 0 } };
    const keys: string[] = await source.sql.begin('isolation level repeatable read read only', async (tx) => {
      await tar.add(HEADER_ENTRY, JSON.stringify(await headerOf(tx, source), null, 2));
      await writeTables(tx, tar, summary);
      return source.storageKind === 'files' ? await storedKeys(tx) : [];
    });
    await writeFiles(source.storage, keys, tar, summary);
    await tar.add(SUMMARY_ENTRY, JSON.stringify(summary, null, 2));
    await tar.finish();
    await piped;
    await fs.promises.rename(partial, out);
    return summary;
  } catch (error) {
    gzip.destroy();
    file.destroy();
    await fs.promises.rm(partial, { force: true });
    throw error;
  }
}

async function headerOf(tx: Tx, source: BackupSource): Promise<BackupHeader> {
  const migrations = await tx<{ name: string }[]>`select name from schema_migrations order by version`;
  return {
    format: 'proctor-backup',
    format_version: 1,
    proctor_version: source.proctorVersion,
    created_at: new Date().toISOString(),
    database: source.embedded ? 'embedded' : 'postgresql',
    storage: source.storageKind,
    migrations: migrations.map((m) => m.name),
  };
}

async function writeTables(tx: Tx, tar: TarWriter, summary: BackupSummary): Promise<void> {
  for (const table of await tableShapes(tx)) {
    let after: string[] | null = null;
    let rows = 0;
    for (let page = 1; ; page++) {
      const { rows: json, last } = await pageOfRows(tx, table, after, PAGE_ROWS, LEFT_OUT[table.name] ?? null);
      if (json.length > 0) await tar.add(pageEntry(table.name, page), `[${json.join(',')}]`);
      rows += json.length;
      if (json.length < PAGE_ROWS) break;
      after = last;
    }
    summary.tables[table.name] = rows;
  }
}

/** The keys of the bytes the snapshot's rows lead to. */
async function storedKeys(tx: Tx): Promise<string[]> {
  const keys: string[] = [];
  for (const table of await storedByteTables(tx)) {
    const rows = await tx.unsafe<{ key: string }[]>(`select distinct storage_key as key from "${table}" where storage_key is not null order by 1`);
    keys.push(...rows.map((row) => row.key));
  }
  return [...new Set(keys)];
}

async function writeFiles(storage: BlobStorage, keys: string[], tar: TarWriter, summary: BackupSummary): Promise<void> {
  for (const key of keys) {
    const stored = await storage.stat(key);
    // A row whose upload never arrived (a pending file) leads to no bytes; nor does one retention removed since the snapshot.
    if (!stored) continue;
    let content: AsyncIterable<Buffer>;
    try {
      content = await storage.open(key);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      summary.files.removed_meanwhile++;
      continue;
    }
    await tar.addStream(`${FILES_DIR}${key}`, stored.sizeBytes, content);
    summary.files.count++;
    summary.files.bytes += stored.sizeBytes;
  }
}
