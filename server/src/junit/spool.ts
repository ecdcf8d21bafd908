import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UploadedFile } from './multipart.ts';
import { JunitFileError } from './read.ts';

/** A file of an upload, received whole onto the server's disk. */
export interface SpooledFile {
  name: string;
  path: string;
  bytes: number;
}

/**
 * An upload's files as they arrive, each written whole to a private folder (0700, files 0600,
 * under the system's temporary folder) before anything of it is read as JUnit: the body is then
 * the server's, and reading it can no longer wait on the client. `remove` when done.
 */
export class Spool {
  readonly files: SpooledFile[] = [];

  private constructor(private readonly dir: string) {}

  static async open(): Promise<Spool> {
    return new Spool(await fs.promises.mkdtemp(path.join(os.tmpdir(), 'proctor-upload-')));
  }

  /**
   * Writes one part to disk. A part that breaks off, or goes over the limit, is a 400 naming the
   * file and the line it reached (lines are counted as it streams); `signal` stops it at once.
   */
  async receive(file: UploadedFile, options: { fileMb: number; signal: AbortSignal }): Promise<SpooledFile> {
    const spooled = { name: file.name, path: path.join(this.dir, `${this.files.length}.xml`), bytes: 0 };
    let lines = 1;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        spooled.bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
        done(null, chunk);
      },
    });
    this.files.push(spooled);
    try {
      await pipeline(file.stream, counting, fs.createWriteStream(spooled.path, { flags: 'wx', mode: 0o600 }));
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      const why = (error as Error).message === 'Unexpected end of form' ? 'the body ended inside it' : (error as Error).message;
      throw new JunitFileError(file.name, lines, `is cut off: ${why}`);
    }
    if (file.truncated())
      throw new JunitFileError(file.name, lines, `is larger than the upload limit of ${options.fileMb} MB a file (PROCTOR_UPLOAD_LIMIT_MB)`);
    return spooled;
  }

  async remove(): Promise<void> {
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }
}
