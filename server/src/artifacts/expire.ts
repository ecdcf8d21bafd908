import type { Sql, Tx } from '../db.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { directUploadKey } from './confirm.ts';

// What the retention pass takes away of attachments: a run's attachment rows, the blobs no other
// attachment holds, and (after the transaction that deleted their rows commits) their bytes,
// through `storage_removals`, which this module owns.

export interface Freed {
  attachments: number;
  /** Blobs no attachment holds any more: their bytes are queued for removal. */
  files: number;
  bytes: number;
}

/**
 * Deletes the run's attachments and the blobs that no other attachment holds, and queues those
 * blobs' bytes for removal, in the caller's transaction. The blobs are locked first: a declaration
 * that takes one of them again (`blobsFor` holds it) is waited for and keeps it.
 */
export async function deleteRunAttachments(sql: Tx, runId: number, now: Date, storage: Pick<BlobStorage, 'direct'>): Promise<Freed> {
  const deleted = await sql<{ blob_id: number }[]>`
    delete from test_attachments where test_run_id = ${runId} returning blob_id::int as blob_id`;
  const blobIds = [...new Set(deleted.map((row) => row.blob_id))];
  if (blobIds.length === 0) return { attachments: 0, files: 0, bytes: 0 };
  await sql`select id from artifact_blobs where id = any(${blobIds}::bigint[]) order by id for update`;
  const freed = await sql<{ id: number; project_id: number; sha256: string; size_bytes: number; storage_key: string | null }[]>`
    delete from artifact_blobs b
    where b.id = any(${blobIds}::bigint[]) and not exists (select 1 from test_attachments a where a.blob_id = b.id)
    returning b.id::int as id, b.project_id, b.sha256, b.size_bytes::float8 as size_bytes, b.storage_key`;
  // A direct upload writes the bucket before it is confirmed: its key may hold bytes no row records yet.
  const removals = freed.flatMap((blob) => {
    const key = blob.storage_key ?? (storage.direct ? directUploadKey(blob) : null);
    return key === null ? [] : [{ key, size: blob.size_bytes }];
  });
  if (removals.length > 0) {
    await sql`
      insert into storage_removals (storage_key, size_bytes, queued_at)
      select key, size, ${now} from unnest(${removals.map((r) => r.key)}::text[], ${removals.map((r) => r.size)}::bigint[]) as r (key, size)`;
  }
  const stored = freed.filter((blob) => blob.storage_key !== null);
  return { attachments: deleted.length, files: stored.length, bytes: stored.reduce((sum, blob) => sum + blob.size_bytes, 0) };
}

/** What deleting these runs' attachments would free: attachments, and the stored blobs no other run's attachment holds. */
export async function attachmentsToFree(sql: Tx, runIds: number[]): Promise<Freed> {
  const [row] = await sql<Freed[]>`
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

/** Removals taken at once: each is a call to the storage. */
const REMOVAL_BATCH = 100;

/**
 * Removes the queued bytes from the storage, then their entries: a crash in between leaves the
 * entry, and removing bytes already gone is no error. Keys are never used twice (a blob's key is
 * its own), so a removal cannot take bytes that a newer row holds. Returns how many were removed.
 */
export async function removeQueuedBytes(sql: Sql, storage: BlobStorage): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await sql<{ id: number; storage_key: string }[]>`
      select id::int as id, storage_key from storage_removals order by id limit ${REMOVAL_BATCH}`;
    if (batch.length === 0) return removed;
    for (const entry of batch) await storage.remove(entry.storage_key);
    await sql`delete from storage_removals where id = any(${batch.map((entry) => entry.id)}::bigint[])`;
    removed += batch.length;
  }
}

/** Bytes whose rows are gone and that wait for their removal from the storage. */
export async function queuedRemovals(sql: Tx): Promise<{ files: number; bytes: number }> {
  const [row] = await sql<{ files: number; bytes: number }[]>`
    select count(*)::int as files, coalesce(sum(size_bytes), 0)::float8 as bytes from storage_removals`;
  return row ?? { files: 0, bytes: 0 };
}
