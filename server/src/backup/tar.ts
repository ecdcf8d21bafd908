import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';

// A backup is a gzipped tar (POSIX ustar), so that `tar tzf` lists it and `tar xzf` unpacks it
// without Proctor. Only what backups need: regular files, names of at most 100 bytes, sizes known
// before the bytes are written.

const BLOCK = 512;

export class ArchiveError extends Error {}

function field(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value.slice(0, length), offset, length, 'latin1');
}

function octal(value: number, digits: number): string {
  return `${value.toString(8).padStart(digits, '0')}\0`;
}

function headerFor(name: string, size: number, mtime: Date): Buffer {
  if (Buffer.byteLength(name) > 100) throw new ArchiveError(`archive entry name too long: ${name}`);
  const header = Buffer.alloc(BLOCK);
  field(header, 0, 100, name);
  field(header, 100, 8, octal(0o644, 7));
  field(header, 108, 8, octal(0, 7));
  field(header, 116, 8, octal(0, 7));
  field(header, 124, 12, octal(size, 11));
  field(header, 136, 12, octal(Math.floor(mtime.getTime() / 1000), 11));
  field(header, 148, 8, '        ');
  field(header, 156, 1, '0');
  field(header, 257, 6, 'ustar\0');
  field(header, 263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return header;
}

async function write(out: Writable, chunk: Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** Writes entries one after another into `out` (a gzip stream, in a backup). */
export class TarWriter {
  constructor(private readonly out: Writable) {}

  async add(name: string, content: Buffer | string): Promise<void> {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    await this.addStream(name, bytes.length, Readable.from([bytes]));
  }

  /** An entry whose bytes come from a stream that must hold exactly `size` bytes. */
  async addStream(name: string, size: number, content: AsyncIterable<Buffer>): Promise<void> {
    await write(this.out, headerFor(name, size, new Date()));
    let written = 0;
    for await (const chunk of content) {
      written += chunk.length;
      if (written > size) throw new ArchiveError(`${name} grew past ${size} bytes while it was archived`);
      await write(this.out, chunk);
    }
    if (written !== size) throw new ArchiveError(`${name} held ${written} bytes, not ${size}, while it was archived`);
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (padding > 0) await write(this.out, Buffer.alloc(padding));
  }

  async finish(): Promise<void> {
    await write(this.out, Buffer.alloc(BLOCK * 2));
    this.out.end();
    await once(this.out, 'finish');
  }
}

/** A numeric field (octal digits, ended by NUL or space), or null when it holds anything else. */
function octalField(header: Buffer, offset: number, length: number): number | null {
  const text = header
    .toString('latin1', offset, offset + length)
    .replace(/[\0 ]+$/, '')
    .replace(/^ +/, '');
  return /^[0-7]{1,12}$/.test(text) ? Number.parseInt(text, 8) : null;
}

/** The header's checksum: the sum of its bytes, its own field counted as spaces. */
function checksumOf(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] as number);
  return sum;
}

/** An entry's name as a message may show it: quoted, its control characters escaped, at most 100 characters. */
export function shownName(name: string): string {
  return JSON.stringify(name.slice(0, 100));
}

export interface TarEntry {
  name: string;
  size: number;
  /** The entry's bytes; read them whole before asking for the next entry. */
  content: AsyncIterable<Buffer>;
}

/** Reads entries from a tar stream (a gunzip stream, in a restore); refuses a cut-off or corrupt archive. */
export async function* readTar(input: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const source = input[Symbol.asyncIterator]();
  let pending: Buffer = Buffer.alloc(0);
  let sourceDone = false;

  async function fill(bytes: number): Promise<boolean> {
    while (pending.length < bytes && !sourceDone) {
      const next = await source.next();
      if (next.done) sourceDone = true;
      else pending = pending.length === 0 ? next.value : Buffer.concat([pending, next.value]);
    }
    return pending.length >= bytes;
  }

  function take(bytes: number): Buffer {
    const taken = pending.subarray(0, bytes);
    pending = pending.subarray(bytes);
    return taken;
  }

  for (;;) {
    if (!(await fill(BLOCK))) throw new ArchiveError('the archive is cut off: it has no end marker');
    const header = take(BLOCK);
    if (header.every((byte) => byte === 0)) return;
    if (header.toString('latin1', 257, 262) !== 'ustar') throw new ArchiveError('not a tar archive (or a corrupt one)');
    const name = header.toString('latin1', 0, 100).replace(/\0.*$/s, '');
    const size = octalField(header, 124, 12);
    if (size === null || octalField(header, 148, 8) !== checksumOf(header))
      throw new ArchiveError(`the archive is corrupt: a bad tar header (${shownName(name)})`);
    let remaining = size;
    async function* content(): AsyncGenerator<Buffer> {
      while (remaining > 0) {
        if (!(await fill(1))) throw new ArchiveError(`the archive is cut off inside ${shownName(name)}`);
        const chunk = take(Math.min(remaining, pending.length));
        remaining -= chunk.length;
        yield chunk;
      }
    }
    yield { name, size, content: content() };
    // Whatever the reader left of the entry is skipped, then its padding.
    while (remaining > 0) {
      if (!(await fill(1))) throw new ArchiveError(`the archive is cut off inside ${shownName(name)}`);
      remaining -= take(Math.min(remaining, pending.length)).length;
    }
    if (!(await fill((BLOCK - (size % BLOCK)) % BLOCK))) throw new ArchiveError(`the archive is cut off after ${shownName(name)}`);
    take((BLOCK - (size % BLOCK)) % BLOCK);
  }
}
