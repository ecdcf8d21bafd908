import type { Tx } from '../db.ts';
import type { Declaration } from './schema.ts';

/** The one module that writes `artifact_blobs`, `test_attachments` and `storage_removals` (bytes whose rows are gone, to remove from the storage). */

export interface BlobRow {
  id: number;
  project_id: number;
  sha256: string;
  size_bytes: number;
  storage_key: string | null;
}

/** Whether the run is one of the project's. */
export async function runExists(sql: Tx, projectId: number, runId: number): Promise<boolean> {
  const rows = await sql`select 1 from test_runs where id = ${runId} and project_id = ${projectId}`;
  return rows.length > 0;
}

/** Times a declaration makes its blobs again after the retention pass took them away between two statements. */
const BLOB_ATTEMPTS = 3;

/**
 * The project's blob of each sha256, made (without bytes) where there was none, and held (key
 * share) until the transaction ends: the retention pass, which locks a blob before it deletes one
 * no attachment holds, then sees the attachments this transaction records.
 */
export async function blobsFor(sql: Tx, projectId: number, wanted: { sha256: string; size_bytes: number }[], now: Date): Promise<Map<string, BlobRow>> {
  const unique = [...new Map(wanted.map((w) => [w.sha256, w])).values()];
  const found = new Map<string, BlobRow>();
  for (let attempt = 0; attempt < BLOB_ATTEMPTS && found.size < unique.length; attempt++) {
    const missing = unique.filter((w) => !found.has(w.sha256));
    await sql`
      insert into artifact_blobs (project_id, sha256, size_bytes, created_at)
      select ${projectId}, sha256, size_bytes, ${now}
      from unnest(${sql.array(missing.map((w) => w.sha256))}::text[], ${sql.array(missing.map((w) => w.size_bytes))}::bigint[]) as given (sha256, size_bytes)
      order by sha256
      on conflict (project_id, sha256) do nothing`;
    const rows = await sql<BlobRow[]>`
      select id::int as id, project_id::int as project_id, sha256, size_bytes::float8 as size_bytes, storage_key
      from artifact_blobs where project_id = ${projectId} and sha256 = any(${sql.array(missing.map((w) => w.sha256))}::text[])
      order by id for key share`;
    for (const row of rows) found.set(row.sha256, row);
  }
  if (found.size < unique.length) throw new Error('artifact blobs were removed as fast as they were declared');
  return found;
}

/** Records each attachment of an attempt against its blob; one declared again is left as it is. */
export async function recordAttachments(
  sql: Tx,
  projectId: number,
  runId: number,
  attachments: { declaration: Declaration; blobId: number }[],
  now: Date,
): Promise<void> {
  if (attachments.length === 0) return;
  await sql`
    insert into test_attachments (project_id, test_run_id, test_case_id, retry, name, content_type, blob_id, created_at)
    select ${projectId}, ${runId}, test_case_id, retry, name, content_type, blob_id, ${now}
    from unnest(
      ${sql.array(attachments.map((a) => a.declaration.test_id))}::text[],
      ${sql.array(attachments.map((a) => a.declaration.retry))}::int[],
      ${sql.array(attachments.map((a) => a.declaration.name))}::text[],
      ${sql.array(attachments.map((a) => a.declaration.content_type))}::text[],
      ${sql.array(attachments.map((a) => a.blobId))}::bigint[]
    ) as given (test_case_id, retry, name, content_type, blob_id)
    on conflict (test_run_id, test_case_id, retry, name, blob_id) do nothing`;
}

export async function getBlob(sql: Tx, blobId: number): Promise<BlobRow | null> {
  const [row] = await sql<BlobRow[]>`
    select id::int as id, project_id::int as project_id, sha256, size_bytes::float8 as size_bytes, storage_key from artifact_blobs where id = ${blobId}`;
  return row ?? null;
}

/**
 * Gives the blob the key its bytes were written under, unless an upload beside this one stored
 * them first: false then, and the caller removes its own copy.
 */
export async function markStored(sql: Tx, blobId: number, storageKey: string, now: Date): Promise<boolean> {
  const rows = await sql`
    update artifact_blobs set storage_key = ${storageKey}, stored_at = ${now}
    where id = ${blobId} and storage_key is null returning id`;
  return rows.length > 0;
}

export interface AttachmentRow {
  id: number;
  test_case_id: string;
  retry: number;
  name: string;
  content_type: string;
  size_bytes: number;
  storage_key: string;
}

/** The run's attachments whose bytes are stored, by test, attempt and the order they were declared in. */
export async function listRunAttachments(sql: Tx, runId: number): Promise<AttachmentRow[]> {
  return sql<AttachmentRow[]>`
    select a.id::int as id, a.test_case_id, a.retry, a.name, a.content_type, b.size_bytes::float8 as size_bytes, b.storage_key
    from test_attachments a
    join artifact_blobs b on b.id = a.blob_id
    where a.test_run_id = ${runId} and b.storage_key is not null
    order by a.test_case_id, a.retry, a.id`;
}

export async function getAttachment(sql: Tx, attachmentId: number): Promise<AttachmentRow | null> {
  const [row] = await sql<AttachmentRow[]>`
    select a.id::int as id, a.test_case_id, a.retry, a.name, a.content_type, b.size_bytes::float8 as size_bytes, b.storage_key
    from test_attachments a
    join artifact_blobs b on b.id = a.blob_id
    where a.id = ${attachmentId} and b.storage_key is not null`;
  return row ?? null;
}

/** Deletes the run's attachments; the blobs they held (each once). */
export async function deleteAttachmentsOfRun(sql: Tx, runId: number): Promise<{ attachments: number; blobIds: number[] }> {
  const deleted = await sql<{ blob_id: number }[]>`
    delete from test_attachments where test_run_id = ${runId} returning blob_id::int as blob_id`;
  return { attachments: deleted.length, blobIds: [...new Set(deleted.map((row) => row.blob_id))] };
}

/**
 * Deletes those of the blobs that no attachment holds, locking them all first (in id order): a
 * declaration that takes one of them again (`blobsFor` holds it) is waited for and keeps it.
 */
export async function deleteUnheldBlobs(sql: Tx, blobIds: number[]): Promise<BlobRow[]> {
  await sql`select id from artifact_blobs where id = any(${blobIds}::bigint[]) order by id for update`;
  return sql<BlobRow[]>`
    delete from artifact_blobs b
    where b.id = any(${blobIds}::bigint[]) and not exists (select 1 from test_attachments a where a.blob_id = b.id)
    returning b.id::int as id, b.project_id, b.sha256, b.size_bytes::float8 as size_bytes, b.storage_key`;
}

/** Queues bytes for removal from the storage, once the transaction that deleted their rows commits. */
export async function queueRemovals(sql: Tx, removals: { key: string; size: number }[], now: Date): Promise<void> {
  if (removals.length === 0) return;
  await sql`
    insert into storage_removals (storage_key, size_bytes, queued_at)
    select key, size, ${now} from unnest(${removals.map((r) => r.key)}::text[], ${removals.map((r) => r.size)}::bigint[]) as r (key, size)`;
}

/** What deleting these runs' attachments would free: attachments, and the stored blobs no other run's attachment holds. */
export async function attachmentsToFree(sql: Tx, runIds: number[]): Promise<{ attachments: number; files: number; bytes: number }> {
  const [row] = await sql<{ attachments: number; files: number; bytes: number }[]>`
    with doomed as (select id, blob_id from test_attachments where test_run_id = any(${runIds}::int[])),
         freed as (
           select b.id, b.size_bytes from artifact_blobs b
           where b.id in (select blob_id from doomed) and b.storage_key is not null
             and not exists (select 1 from test_attachments a where a.blob_id = b.id and a.test_run_id <> all(${runIds}::int[]))
         )
    select (select count(*)::int from doomed) as attachments, (select count(*)::int from freed) as files,
           (select coalesce(sum(size_bytes), 0)::float8 from freed) as bytes`;
  return row ?? { attachments: 0, files: 0, bytes: 0 };
}

/** The oldest queued removals, at most `limit`. */
export async function queuedRemovalBatch(sql: Tx, limit: number): Promise<{ id: number; storage_key: string }[]> {
  return sql<{ id: number; storage_key: string }[]>`
    select id::int as id, storage_key from storage_removals order by id limit ${limit}`;
}

/** Removals done: their entries go. */
export async function deleteRemovals(sql: Tx, ids: number[]): Promise<void> {
  await sql`delete from storage_removals where id = any(${ids}::bigint[])`;
}

/** Bytes whose rows are gone and that wait for their removal from the storage. */
export async function queuedRemovals(sql: Tx): Promise<{ files: number; bytes: number }> {
  const [row] = await sql<{ files: number; bytes: number }[]>`
    select count(*)::int as files, coalesce(sum(size_bytes), 0)::float8 as bytes from storage_removals`;
  return row ?? { files: 0, bytes: 0 };
}
