import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { BlobStorage } from '../storage/blobs.ts';

/**
 * Answers with stored bytes and `headers` (content-type and content-disposition among them): from
 * a store clients reach themselves, a redirect to its presigned URL, which answers with the same
 * type, disposition and caching; otherwise streamed from the storage. `viaServer` streams always.
 */
export async function deliverStored(res: Response, storage: BlobStorage, key: string, headers: Record<string, string>, viaServer = false): Promise<void> {
  if (storage.direct && !viaServer) {
    const location = await storage.direct.downloadUrl(key, {
      contentType: headers['content-type'] ?? 'application/octet-stream',
      contentDisposition: headers['content-disposition'] ?? 'attachment',
      cacheControl: headers['cache-control'] ?? 'private, max-age=3600',
    });
    // The redirect itself is not kept: its URL is signed for an hour.
    res.setHeader('cache-control', 'private, no-store');
    res.redirect(302, location);
    return;
  }
  // Opened before the answer starts, so that a missing object is an error and not a cut-off body.
  const bytes = await storage.open(key);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  // pipeline, not pipe: a download the client aborts destroys the stream, which closes its file
  // (pipe would leave it open until the garbage collector found it).
  await pipeline(bytes, res).catch((error: unknown) => {
    if (!res.destroyed) throw error;
  });
}
