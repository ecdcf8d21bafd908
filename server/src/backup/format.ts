import { z } from 'zod';
import type { Tx } from '../db.ts';
import { ArchiveError } from './tar.ts';

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

/**
 * Rows a backup leaves out, by table (a condition that picks them): the secret that signs URLs,
 * which a holder of the archive could sign with for the server it is restored as. A restore
 * makes a new one; URLs signed before it stop working (docs/decisions/backup-signing-secret.md).
 */
export const LEFT_OUT: Readonly<Record<string, string>> = { settings: `name = 'signing_secret'` };

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

const headerSchema = z.object({
  format: z.literal('proctor-backup'),
  format_version: z.literal(1),
  proctor_version: z.string().max(100),
  created_at: z.string().max(100),
  database: z.enum(['embedded', 'postgresql']),
  storage: z.enum(['files', 's3']),
  migrations: z.array(z.string().max(200)).max(100_000),
});

const count = z.number().int().nonnegative();
const summarySchema = z.object({
  tables: z.record(z.string().max(200), count),
  files: z.object({ count, bytes: count, removed_meanwhile: count }),
});

/** The key of a stored file (`files/<key>`): what file storage makes, 32 hex digits, and nothing that could leave the folder. */
export const FILE_KEY = /^[0-9a-f]{32}$/;

/** The first problem zod found, in one line: where, and what. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join('.') || 'the whole'}: ${issue.message}`.replace(/\s+/g, ' ') : 'malformed';
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ArchiveError(`the archive's ${what} is not JSON (cut off or corrupt): ${(error as Error).message}`);
  }
}

/** A header read from an archive, checked to be one this Proctor can restore. */
export function parseHeader(text: string, knownMigrations: string[]): BackupHeader {
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    throw new RestoreRefused('the archive is not a Proctor backup: its header is not JSON');
  }
  const given = (json ?? {}) as { format?: unknown; format_version?: unknown };
  if (given.format !== 'proctor-backup') throw new RestoreRefused('the archive is not a Proctor backup: its header names another format');
  if (given.format_version !== 1) {
    throw new RestoreRefused(
      typeof given.format_version === 'number' && given.format_version > 1
        ? `the archive is a Proctor backup of format ${given.format_version}, which this version cannot read: restore it with a later version`
        : 'the archive is not a Proctor backup of format 1',
    );
  }
  const parsed = headerSchema.safeParse(json);
  if (!parsed.success) throw new RestoreRefused(`the archive's header is not a Proctor backup's (${firstIssue(parsed.error)})`);
  const header = parsed.data;
  const unknown = header.migrations.filter((name, i) => knownMigrations[i] !== name);
  if (unknown.length > 0) {
    throw new RestoreRefused(
      `the backup was made by Proctor ${JSON.stringify(header.proctor_version)}, whose schema this version does not know (${JSON.stringify(unknown[0])}): restore it with that version or a later one`,
    );
  }
  return header;
}

/** The summary read from an archive, checked to be one. */
export function parseSummary(text: string): BackupSummary {
  const parsed = summarySchema.safeParse(parseJson(text, SUMMARY_ENTRY));
  if (!parsed.success) throw new ArchiveError(`the archive's ${SUMMARY_ENTRY} is not a backup's summary (${firstIssue(parsed.error)})`);
  return parsed.data;
}

/** A page of rows read from an archive: a JSON array of objects. Answers how many. */
export function countRows(text: string, entry: string): number {
  const rows = parseJson(text, entry);
  if (!Array.isArray(rows) || rows.some((row) => typeof row !== 'object' || row === null || Array.isArray(row))) {
    throw new ArchiveError(`the archive's ${entry} is not an array of rows`);
  }
  return rows.length;
}

/** A restore that cannot go ahead: said in one line, nothing written. */
export class RestoreRefused extends Error {}
