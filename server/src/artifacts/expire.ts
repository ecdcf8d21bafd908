import type { Sql, Tx } from '../db.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import { directUploadKey } from './confirm.ts';
import { deleteAttachmentsOfRun, deleteRemovals, deleteUnheldBlobs, queuedRemovalBatch, queueRemovals } from './store.ts';

// What the retention pass takes away of attachments: a run's attachment rows, the blobs no other
// attachment holds, and (after the transaction that deleted their rows commits) their bytes,
// through the store's `storage_removals`.

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
  const { attachments, blobIds } = await deleteAttachmentsOfRun(sql, runId);
  if (blobIds.length === 0) return { attachments: 0, files: 0, bytes: 0 };
  const freed = await deleteUnheldBlobs(sql, blobIds);
  // A direct upload writes the bucket before it is confirmed: its key may hold bytes no row records yet.
  const removals = freed.flatMap((blob) => {
    const key = blob.storage_key ?? (storage.direct ? directUploadKey(blob) : null);
    return key === null ? [] : [{ key, size: blob.size_bytes }];
  });
  await queueRemovals(sql, removals, now);
  const stored = freed.filter((blob) => blob.storage_key !== null);
  return { attachments, files: stored.length, bytes: stored.reduce((sum, blob) => sum + blob.size_bytes, 0) };
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
    const batch = await queuedRemovalBatch(sql, REMOVAL_BATCH);
    if (batch.length === 0) return removed;
    for (const entry of batch) await storage.remove(entry.storage_key);
    await deleteRemovals(
      sql,
      batch.map((entry) => entry.id),
    );
    removed += batch.length;
  }
}
