import { createHash } from 'node:crypto';
import { pipeline, type Readable, Transform } from 'node:stream';
import { type BlobStorage, SizeMismatchError, TooLargeError } from '../storage/blobs.ts';
import type { BlobRow } from './store.ts';

export type Received = { kind: 'stored'; key: string } | { kind: 'too-large' } | { kind: 'mismatch'; message: string };

/**
 * Writes an upload under a key of its own, hashing it on the way: it is kept only when it has the
 * declared size and sha256. Two uploads of one blob at once each write their own copy; the caller
 * keeps the first one recorded.
 */
export async function receiveBlob(storage: BlobStorage, blob: BlobRow, body: Readable, signal: AbortSignal): Promise<Received> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // A client that goes away mid-upload fails the write instead of leaving it waiting; one that
  // stalls (`signal`) too, at once: the partial file is removed either way.
  pipeline(body, hashing, () => undefined);
  const stop = () => hashing.destroy(signal.reason as Error);
  if (signal.aborted) stop();
  signal.addEventListener('abort', stop);
  const key = storage.newKey();
  try {
    await storage.write(key, hashing, { maxBytes: blob.size_bytes, exactBytes: blob.size_bytes });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof TooLargeError) return { kind: 'too-large' };
    if (error instanceof SizeMismatchError) return { kind: 'mismatch', message: error.message };
    throw error;
  } finally {
    signal.removeEventListener('abort', stop);
  }
  const sha256 = hash.digest('hex');
  if (sha256 !== blob.sha256) {
    await storage.remove(key);
    return { kind: 'mismatch', message: `its sha256 is ${sha256}, not the declared ${blob.sha256}` };
  }
  return { kind: 'stored', key };
}
