import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** Where uploaded bytes live. Keys are made by the storage, never from user input. */
export interface BlobStorage {
  newKey(): string;
  /**
   * Writes the stream under the key, whole or not at all: aside first, then in place of what the
   * key held. Fails with `TooLargeError` past `maxBytes` and `SizeMismatchError` when `exactBytes`
   * is given and not met; the key then keeps what it had. Returns the size.
   */
  write(key: string, content: Readable, limits: { maxBytes: number; exactBytes: number | null }): Promise<number>;
  read(key: string): Readable;
  remove(key: string): Promise<void>;
}

export class TooLargeError extends Error {}
export class SizeMismatchError extends Error {}

/** The default storage: files under `<dataDir>/files/`. */
export class FileStorage implements BlobStorage {
  constructor(private readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  newKey(): string {
    return randomBytes(16).toString('hex');
  }

  private pathOf(key: string): string {
    if (!/^[0-9a-f]{32}$/.test(key)) throw new Error('invalid storage key');
    return path.join(this.root, key);
  }

  async write(key: string, content: Readable, limits: { maxBytes: number; exactBytes: number | null }): Promise<number> {
    const target = this.pathOf(key);
    // A name of this write's own: two uploads to one key at once each write a whole file, and the last rename wins.
    const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      const size = await copyWithin(content, partial, limits.maxBytes);
      if (limits.exactBytes !== null && size !== limits.exactBytes) {
        throw new SizeMismatchError(`${size} bytes received, but size_bytes is ${limits.exactBytes}`);
      }
      await fs.promises.rename(partial, target);
      return size;
    } catch (error) {
      await fs.promises.rm(partial, { force: true });
      throw error;
    }
  }

  read(key: string): Readable {
    return fs.createReadStream(this.pathOf(key));
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }
}

/**
 * Copies `content` into a new file, at most `maxBytes` of it. Past the limit the rest is read off
 * and dropped rather than the stream destroyed, so that an HTTP request's socket stays up for the 413.
 */
function copyWithin(content: Readable, file: string, maxBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
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
