import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

export interface WriteLimits {
  maxBytes: number;
  exactBytes: number | null;
}

/** What the storage holds under a key: its size, and its sha256 (hex) where the store keeps one. */
export interface StoredObject {
  sizeBytes: number;
  sha256: string | null;
}

/**
 * A store that clients reach themselves (S3): uploads and downloads go between them and the store
 * by presigned URLs, never through the server.
 */
export interface DirectTransfer {
  /** The origin its URLs point to, which pages that show stored images and video must allow. */
  readonly origin: string;
  /** A URL to PUT the bytes to, and the headers the PUT must carry (the store checks the sha256). */
  uploadUrl(key: string, expected: { sizeBytes: number | null; sha256: string | null }): Promise<{ url: string; headers: Record<string, string> }>;
  /** A URL the store answers with these response headers. */
  downloadUrl(key: string, response: { contentType: string; contentDisposition: string; cacheControl: string }): Promise<string>;
}

/** Where uploaded bytes live. Keys are made by the storage or the server, never from user input. */
export interface BlobStorage {
  newKey(): string;
  /**
   * Writes the stream under the key, whole or not at all: aside first, then in place of what the
   * key held. Fails with `TooLargeError` past `maxBytes` and `SizeMismatchError` when `exactBytes`
   * is given and not met; the key then keeps what it had. Returns the size.
   */
  write(key: string, content: Readable, limits: WriteLimits): Promise<number>;
  open(key: string): Promise<Readable>;
  /** Null when nothing is stored under the key. */
  stat(key: string): Promise<StoredObject | null>;
  remove(key: string): Promise<void>;
  /** Null when every byte goes through the server. */
  readonly direct: DirectTransfer | null;
}

export class TooLargeError extends Error {}
export class SizeMismatchError extends Error {}

/** The default storage: files under `<dataDir>/files/`. */
export class FileStorage implements BlobStorage {
  readonly direct = null;

  constructor(private readonly root: string) {
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  }

  newKey(): string {
    return randomBytes(16).toString('hex');
  }

  private pathOf(key: string): string {
    if (!/^[0-9a-f]{32}$/.test(key)) throw new Error('invalid storage key');
    return path.join(this.root, key);
  }

  async write(key: string, content: Readable, limits: WriteLimits): Promise<number> {
    const target = this.pathOf(key);
    // A name of this write's own: two uploads to one key at once each write a whole file, and the last rename wins.
    const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      const size = await spool(content, partial, limits);
      await fs.promises.rename(partial, target);
      return size;
    } catch (error) {
      await fs.promises.rm(partial, { force: true });
      throw error;
    }
  }

  async open(key: string): Promise<Readable> {
    const file = this.pathOf(key);
    // Opened before the answer starts, so that a missing file is an error and not a cut-off body.
    const handle = await fs.promises.open(file, 'r');
    return handle.createReadStream();
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      return { sizeBytes: (await fs.promises.stat(this.pathOf(key))).size, sha256: null };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }
}

/** Writes `content` into a new file within the limits; the caller removes the file when this fails. */
export async function spool(content: Readable, file: string, limits: WriteLimits): Promise<number> {
  const size = await copyWithin(content, file, limits.maxBytes);
  if (limits.exactBytes !== null && size !== limits.exactBytes) {
    throw new SizeMismatchError(`${size} bytes received, but size_bytes is ${limits.exactBytes}`);
  }
  return size;
}

/**
 * Copies `content` into a new file, at most `maxBytes` of it. Past the limit the rest is read off
 * and dropped rather than the stream destroyed, so that an HTTP request's socket stays up for the 413.
 */
function copyWithin(content: Readable, file: string, maxBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    // A request whose client went away while the handler was still looking things up has already
    // emitted its last event: waiting for one would hold the request, and its file, for ever.
    if (content.destroyed) return reject(content.errored ?? new Error('the upload was cut off before its end'));
    const out = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 });
    let size = 0;
    let ended = false;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      content.off('data', onData);
      content.resume();
      // Only once the file is closed: the stream opens it asynchronously, and a removal before its
      // open would leave the file behind.
      if (out.closed) reject(error);
      else out.once('close', () => reject(error));
      out.destroy();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return fail(new TooLargeError(`content exceeds ${maxBytes} bytes`));
      if (!out.write(chunk)) {
        content.pause();
        out.once('drain', () => content.resume());
      }
    };
    content.on('data', onData);
    content.once('error', fail);
    content.once('close', () => {
      if (!ended) fail(new Error('the upload was cut off before its end'));
    });
    out.once('error', fail);
    content.once('end', () => {
      ended = true;
      if (failed) return;
      out.once('close', () => resolve(size));
      out.end();
    });
  });
}
