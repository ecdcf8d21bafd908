import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';

/** Files as a multipart/form-data body, streamed from disk: its content type, its size, and a way to read it (again, for a retry). */
export interface MultipartBody {
  contentType: string;
  size: number;
  open(): NodeJS.ReadableStream;
}

/** The name a file's part is given (its base name, quotes and line ends made safe): the server names the file so in its answer. */
export function partName(file: string): string {
  return path.basename(file).replace(/["\r\n\\]/g, '_');
}

export function multipartFiles(files: string[], field = 'file'): MultipartBody {
  const boundary = `proctor-${randomBytes(12).toString('hex')}`;
  const parts = files.map((file) => {
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${partName(file)}"\r\nContent-Type: application/xml\r\n\r\n`,
    );
    return { file, head, size: fs.statSync(file).size };
  });
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const size = parts.reduce((sum, part) => sum + part.head.length + part.size + 2, tail.length);
  async function* chunks(): AsyncGenerator<Buffer> {
    for (const part of parts) {
      yield part.head;
      for await (const chunk of fs.createReadStream(part.file)) yield chunk as Buffer;
      yield Buffer.from('\r\n');
    }
    yield tail;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, size, open: () => Readable.from(chunks()) };
}
