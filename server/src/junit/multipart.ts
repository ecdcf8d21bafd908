import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { InvalidInputError } from '../errors.ts';

/** A file part of a multipart body, to be read to its end before the next is asked for. */
export interface UploadedFile {
  name: string;
  stream: Readable;
  /** Whether the file went over the size limit (its stream then ended early). */
  truncated(): boolean;
}

/**
 * The files of a `multipart/form-data` request, one at a time as they arrive: nothing is held
 * beyond the part being read. Other fields are refused (the upload's settings are its query).
 */
export async function* multipartFiles(req: IncomingMessage, limits: { fileBytes: number; files: number }): AsyncGenerator<UploadedFile> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { fileSize: limits.fileBytes, files: limits.files, fields: 0, parts: limits.files } });
  } catch (error) {
    throw new InvalidInputError(`body: must be multipart/form-data with the JUnit XML files as its parts (${(error as Error).message})`);
  }
  const queue: (UploadedFile | Error | null)[] = [];
  let wake: (() => void) | null = null;
  const push = (item: UploadedFile | Error | null) => {
    queue.push(item);
    wake?.();
  };
  parser.on('file', (field, stream, info) => {
    let over = false;
    stream.on('limit', () => (over = true));
    push({ name: info.filename || field, stream, truncated: () => over });
  });
  parser.on('field', (field) => push(new InvalidInputError(`body.${field}: an upload takes files alone; its settings go in the query`)));
  parser.on('filesLimit', () => push(new InvalidInputError(`body: more than ${limits.files} files in one upload`)));
  parser.on('partsLimit', () => push(new InvalidInputError(`body: more than ${limits.files} parts in one upload`)));
  parser.on('error', (error: Error) => push(new InvalidInputError(`body: is not well-formed multipart/form-data (${error.message})`)));
  parser.on('close', () => push(null));
  req.pipe(parser);
  try {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      const item = queue.shift();
      if (item === null || item === undefined) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  } finally {
    // Whatever is left unread (a refused upload) is drained, so that the answer goes out.
    req.unpipe(parser);
    req.resume();
  }
}
