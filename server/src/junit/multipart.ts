import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { InvalidInputError } from '../errors.ts';

/** A file part of a multipart body, to be read to its end before the next is asked for. */
export interface UploadedFile {
  name: string;
  /**
   * Its bytes. Fails when the body breaks off inside the part ("Unexpected end of form"), when the
   * client goes away, or when `signal` aborts: the reader names the file and the line it reached.
   */
  stream: Readable;
  /** Whether the file went over the size limit (its stream then ended early). */
  truncated(): boolean;
}

/**
 * The files of a `multipart/form-data` request, one at a time as they arrive: nothing is held
 * beyond the part being read. Other fields are refused (the upload's settings are its query).
 * Every error of the body is thrown here or by a part's stream, never left unheard (an `'error'`
 * nobody listens to ends the process); `signal` (the client gone or stalled) stops it at once.
 */
export async function* multipartFiles(req: IncomingMessage, limits: { fileBytes: number; files: number }, signal: AbortSignal): AsyncGenerator<UploadedFile> {
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
  const parts: Readable[] = [];
  parser.on('file', (field, stream, info) => {
    let over = false;
    stream.on('limit', () => (over = true));
    // busboy destroys a part with an error when the body ends inside it, maybe while nothing reads
    // it: the reader sees the error (its iterator fails) and names the file; this keeps it heard.
    stream.on('error', () => undefined);
    parts.push(stream);
    push({ name: info.filename || field, stream, truncated: () => over });
  });
  parser.on('field', (field) => push(new InvalidInputError(`body.${field}: an upload takes files alone; its settings go in the query`)));
  parser.on('filesLimit', () => push(new InvalidInputError(`body: more than ${limits.files} files in one upload`)));
  parser.on('partsLimit', () => push(new InvalidInputError(`body: more than ${limits.files} parts in one upload`)));
  parser.on('error', (error: Error) => push(new InvalidInputError(`body: is not well-formed multipart/form-data (${error.message})`)));
  parser.on('close', () => push(null));
  const stop = (reason: Error) => {
    push(reason);
    for (const part of parts) if (!part.destroyed) part.destroy(reason);
  };
  const onAbort = () => stop(signal.reason as Error);
  // A body that breaks off without the client's going (a proxy's cut) ends the request unfinished.
  const onClose = () => {
    if (!req.complete) stop(new InvalidInputError('body: the request ended before its multipart body did'));
  };
  signal.addEventListener('abort', onAbort);
  req.once('close', onClose);
  if (signal.aborted) onAbort();
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
    signal.removeEventListener('abort', onAbort);
    req.off('close', onClose);
    req.unpipe(parser);
    for (const part of parts) if (!part.destroyed) part.destroy();
    parser.destroy();
    // Whatever is left unread (a refused upload) is drained, so that the answer goes out; a client
    // gone or stalled is not waited for.
    if (!signal.aborted) req.resume();
  }
}
