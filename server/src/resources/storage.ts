import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where uploaded bytes live. Keys are made by the storage, never from user input. */
export interface BlobStorage {
  newKey(): string;
  /** Writes the stream under the key; fails with `TooLargeError` past `maxBytes`. Returns the size. */
  write(key: string, content: Readable, maxBytes: number): Promise<number>;
  read(key: string): Readable;
  remove(key: string): Promise<void>;
}

export class TooLargeError extends Error {}

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

  async write(key: string, content: Readable, maxBytes: number): Promise<number> {
    const target = this.pathOf(key);
    const partial = `${target}.partial`;
    let size = 0;
    content.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) content.destroy(new TooLargeError(`content exceeds ${maxBytes} bytes`));
    });
    try {
      await pipeline(content, fs.createWriteStream(partial));
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
