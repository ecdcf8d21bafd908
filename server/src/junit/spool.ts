import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Values kept on disk in order, written one at a time and read back once: an upload's batches,
 * read and checked before its transaction begins, without holding the upload in memory. Private
 * (0600, a folder of its own under the system's temporary folder) and removed by `remove`.
 */
export class Spool {
  private readonly places: { at: number; length: number }[] = [];
  private size = 0;

  private constructor(
    private readonly dir: string,
    private readonly handle: fs.promises.FileHandle,
  ) {}

  static async open(): Promise<Spool> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'proctor-upload-'));
    try {
      return new Spool(dir, await fs.promises.open(path.join(dir, 'batches'), 'wx+', 0o600));
    } catch (error) {
      await fs.promises.rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  get count(): number {
    return this.places.length;
  }

  async append(value: unknown): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(value));
    await this.handle.write(bytes, 0, bytes.length, this.size);
    this.places.push({ at: this.size, length: bytes.length });
    this.size += bytes.length;
  }

  /** The values in the order written. */
  async *values<T>(): AsyncGenerator<T> {
    for (const place of this.places) {
      const bytes = Buffer.allocUnsafe(place.length);
      await this.handle.read(bytes, 0, place.length, place.at);
      yield JSON.parse(bytes.toString('utf8')) as T;
    }
  }

  async remove(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }
}
