import fs from 'node:fs';
import { createGunzip } from 'node:zlib';
import {
  type BackupHeader,
  countRows,
  FILE_KEY,
  FILES_DIR,
  HEADER_ENTRY,
  parseHeader,
  parseSummary,
  RestoreRefused,
  SUMMARY_ENTRY,
  tableOfEntry,
} from './format.ts';
import { ArchiveError, readTar, shownName, type TarEntry } from './tar.ts';

// A restore reads its archive twice: once here, through to its end, before anything is opened or
// written; then to load it. A cut-off, corrupt or hand-made archive (bad gzip or tar, a header or
// summary that is not a backup's, a page of rows that is not JSON, a file whose name would leave
// the storage folder, counts that disagree) is refused by this pass, in one line, with nothing
// written. What only the database can refuse (rows that break its constraints) is refused by the
// load, whose transaction then leaves nothing either.

/** The entries of an archive file, through gunzip. */
export function archiveEntries(file: string): AsyncGenerator<TarEntry> {
  return readTar(fs.createReadStream(file).pipe(createGunzip()));
}

export async function text(entry: TarEntry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of entry.content) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The archive's first entry, its header, checked to be a backup this version can restore. */
export async function readHeader(file: string, entries: AsyncGenerator<TarEntry>, knownMigrations: string[]): Promise<BackupHeader> {
  const first = await entries.next();
  if (first.done || first.value.name !== HEADER_ENTRY) throw new RestoreRefused(`${file} is not a Proctor backup: it does not start with ${HEADER_ENTRY}`);
  return parseHeader(await text(first.value), knownMigrations);
}

/** Reads the whole archive and answers its header when every entry is one a backup writes and the summary agrees with them. */
export async function checkArchive(file: string, knownMigrations: string[]): Promise<BackupHeader> {
  const entries = archiveEntries(file);
  const header = await readHeader(file, entries, knownMigrations);
  const rows = new Map<string, number>();
  const keys = new Set<string>();
  let bytes = 0;
  let summarized = false;
  for await (const entry of entries) {
    if (summarized) throw new ArchiveError(`the archive holds an entry after its ${SUMMARY_ENTRY}: ${shownName(entry.name)}`);
    const table = tableOfEntry(entry.name);
    if (table !== null) {
      rows.set(table, (rows.get(table) ?? 0) + countRows(await text(entry), entry.name));
    } else if (entry.name.startsWith(FILES_DIR)) {
      const key = entry.name.slice(FILES_DIR.length);
      if (!FILE_KEY.test(key))
        throw new ArchiveError(`the archive holds a file a backup never writes (its name could leave the storage folder): ${shownName(entry.name)}`);
      if (keys.has(key)) throw new ArchiveError(`the archive holds ${shownName(entry.name)} twice`);
      keys.add(key);
      for await (const chunk of entry.content) bytes += chunk.length;
    } else if (entry.name === SUMMARY_ENTRY) {
      const summary = parseSummary(await text(entry));
      for (const name of new Set([...rows.keys(), ...Object.keys(summary.tables)])) {
        const expected = summary.tables[name] ?? 0;
        if ((rows.get(name) ?? 0) !== expected) throw new ArchiveError(`the archive's ${name} holds ${rows.get(name) ?? 0} rows, not the ${expected} it says`);
      }
      if (keys.size !== summary.files.count || bytes !== summary.files.bytes) {
        throw new ArchiveError(`the archive holds ${keys.size} files (${bytes} bytes), not the ${summary.files.count} (${summary.files.bytes} bytes) it says`);
      }
      summarized = true;
    } else {
      throw new ArchiveError(`the archive holds an entry a backup never writes: ${shownName(entry.name)}`);
    }
  }
  if (!summarized) throw new ArchiveError(`the archive is cut off: it has no ${SUMMARY_ENTRY}`);
  return header;
}
