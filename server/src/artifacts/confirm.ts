import { createHash } from 'node:crypto';
import type { BlobStorage } from '../storage/blobs.ts';
import type { BlobRow } from './store.ts';

export type Confirmed = { kind: 'stored'; key: string } | { kind: 'missing' } | { kind: 'mismatch'; message: string };

/**
 * Where a blob's bytes go when the reporter puts them straight into the bucket: one key per blob
 * row, so that uploads of the same bytes at once write the same object, and bytes declared again
 * after the retention policy removed them never share a key with the removal still queued.
 */
export function directUploadKey(blob: Pick<BlobRow, 'id' | 'project_id' | 'sha256'>): string {
  return `artifacts/${blob.project_id}/${blob.sha256}-${blob.id}`;
}

/**
 * Checks what a direct upload left in the bucket: the declared size, and the declared sha256 (the
 * store's own checksum where it keeps one, else the bytes read back). Wrong bytes are removed, so
 * that a corrected upload can take their place.
 */
export async function confirmDirectUpload(storage: BlobStorage, blob: BlobRow): Promise<Confirmed> {
  const key = directUploadKey(blob);
  const stored = await storage.stat(key);
  if (!stored) return { kind: 'missing' };
  if (stored.sizeBytes !== blob.size_bytes) {
    await storage.remove(key);
    return { kind: 'mismatch', message: `${stored.sizeBytes} bytes were uploaded, but size_bytes is ${blob.size_bytes}` };
  }
  const sha256 = stored.sha256 ?? (await sha256Of(storage, key));
  if (sha256 !== blob.sha256) {
    await storage.remove(key);
    return { kind: 'mismatch', message: `the uploaded bytes' sha256 is ${sha256}, not the declared ${blob.sha256}` };
  }
  return { kind: 'stored', key };
}

async function sha256Of(storage: BlobStorage, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await storage.open(key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
