import type { Tx } from '../db.ts';

// What a backup archive holds, in this order:
//   proctor-backup.json          the header: format, Proctor's version, the migrations applied
//   database/<table>/<n>.json    a page of a table's rows, as a JSON array of row_to_json's rows
//   files/<key>                  the stored bytes under a key (file storage only)
//   summary.json                 rows per table, files and bytes: a restore checks them, and an
//                                archive without it is cut off

export const HEADER_ENTRY = 'proctor-backup.json';
export const SUMMARY_ENTRY = 'summary.json';
export const DATABASE_DIR = 'database/';
export const FILES_DIR = 'files/';

export interface BackupHeader {
  format: 'proctor-backup';
  format_version: 1;
  proctor_version: string;
  created_at: string;
  database: 'embedded' | 'postgresql';
  storage: 'files' | 's3';
  /** The names of the migrations the source had applied: its schema. */
  migrations: string[];
}

export interface BackupSummary {
  tables: Record<string, number>;
  files: { count: number; bytes: number; removed_meanwhile: number };
}

export function pageEntry(table: string, page: number): string {
  return `${DATABASE_DIR}${table}/${String(page).padStart(6, '0')}.json`;
}

/** The table a page entry belongs to, or null for another entry. */
export function tableOfEntry(name: string): string | null {
  const match = /^database\/([a-z0-9_]+)\/\d{6}\.json$/.exec(name);
  return match ? (match[1] as string) : null;
}

/**
 * The tables whose rows lead to stored bytes (a `storage_key` column). `storage_removals` is a queue
 * of bytes to remove, whose rows are gone: its keys lead nowhere a restore needs.
 */
export async function storedByteTables(tx: Tx): Promise<string[]> {
  const rows = await tx<{ table: string }[]>`
    select c.relname as table from pg_attribute a
    join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind = 'r' and a.attname = 'storage_key' and not a.attisdropped and c.relname <> 'storage_removals'
    order by 1`;
  return rows.map((row) => row.table);
}

/** A header read from an archive, checked to be one this Proctor can restore. */
export function parseHeader(text: string, knownMigrations: string[]): BackupHeader {
  let header: BackupHeader;
  try {
    header = JSON.parse(text) as BackupHeader;
  } catch {
    throw new RestoreRefused('the archive is not a Proctor backup: its header is not JSON');
  }
  if (header.format !== 'proctor-backup' || header.format_version !== 1) throw new RestoreRefused('the archive is not a Proctor backup of format 1');
  const unknown = header.migrations.filter((name, i) => knownMigrations[i] !== name);
  if (unknown.length > 0) {
    throw new RestoreRefused(
      `the backup was made by Proctor ${header.proctor_version}, whose schema this version does not know (${unknown[0]}): restore it with that version or a later one`,
    );
  }
  return header;
}

/** A restore that cannot go ahead: said in one line, nothing written. */
export class RestoreRefused extends Error {}
