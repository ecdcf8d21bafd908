import type { Tx } from '../db.ts';
import type { Declaration } from './schema.ts';

/** The one module that writes `artifact_blobs` and `test_attachments`. */

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
