import type { Request, RequestHandler, Response } from 'express';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { HttpError } from './errors.ts';

type Decode = (raw: Buffer, options: { maxOutputLength: number }) => Buffer;

const DECODERS: Record<string, Decode> = {
  identity: (raw) => raw,
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/** `5mb`, `512kb` (the form config.ts accepts) in bytes. */
function bytesOf(limit: string): number {
  const match = /^(\d+)(kb|mb)$/i.exec(limit);
  if (!match) throw new Error(`not a size: ${limit}`);
  return Number(match[1]) * (match[2]?.toLowerCase() === 'mb' ? 1024 * 1024 : 1024);
}

/**
 * The JSON body of an API request, decoded in one call. A reporter's batch of 500 results is about
 * 6 KB of gzip that inflates to 160 KB: body-parser's streaming inflate spends a thread-pool round
 * trip on every 16 KB of it, and this path sets the ingestion rate (bench/ingest). The limit holds
 * for the body both as sent and decoded.
 */
export function jsonBody(limit: string): RequestHandler {
  const maxBytes = bytesOf(limit);
  return (req, res, next) => {
    if (!req.is('application/json')) {
      next();
      return;
    }
    let decode: Decode;
    try {
      decode = decoderOf(req, maxBytes);
    } catch (error) {
      // Read off what was sent, so the connection stays usable for the answer and what follows.
      req.resume();
      next(error);
      return;
    }
    readJson(req, decode, maxBytes).then(({ body, mayHoldNul }) => {
      req.body = body;
      res.locals.bodyMayHoldNul = mayHoldNul;
      next();
    }, next);
  };
}

function decoderOf(req: Request, maxBytes: number): Decode {
  if (Number(req.headers['content-length']) > maxBytes) throw new HttpError(413, 'body: request body exceeds the size limit');
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset && charset.toLowerCase() !== 'utf-8') throw new HttpError(415, `body: unsupported charset "${charset}"`);
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decode = DECODERS[encoding];
  if (!decode) throw new HttpError(415, 'body: unsupported content encoding');
  return decode;
}

/**
 * The parsed body, and whether its JSON text holds a `\u0000` escape: JSON carries no raw control
 * characters, so that escape is the only way NUL gets into a string, and a body without one needs
 * no walk of its strings (one byte search instead).
 */
async function readJson(req: Request, decode: Decode, maxBytes: number): Promise<{ body: unknown; mayHoldNul: boolean }> {
  const decoded = decodeWithin(decode, await readRaw(req, maxBytes), maxBytes);
  return { body: parseJson(decoded), mayHoldNul: decoded.includes('\\u0000') };
}

/** The body as sent; past `maxBytes` the rest is read off and dropped so the answer can be a 413. */
function readRaw(req: Request, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > maxBytes) reject(new HttpError(413, 'body: request body exceeds the size limit'));
      else resolve(Buffer.concat(chunks, size));
    });
    req.on('error', () => reject(new HttpError(400, 'body: request aborted')));
  });
}

function decodeWithin(decode: Decode, raw: Buffer, maxBytes: number): Buffer {
  try {
    return decode(raw, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new HttpError(413, 'body: request body exceeds the size limit');
    throw new HttpError(400, `body: could not be decoded (${(error as Error).message})`);
  }
}

/** Objects and arrays only, as body-parser's strict mode; an empty body reads as `{}`. */
function parseJson(text: Buffer): unknown {
  const json = text.toString('utf8');
  const first = /\S/.exec(json)?.[0];
  if (first === undefined) return {};
  if (first !== '{' && first !== '[') throw new HttpError(400, `body: malformed JSON (a body is an object or an array, not one starting with "${first}")`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new HttpError(400, `body: malformed JSON (${(error as Error).message})`);
  }
  return SURROGATE_ESCAPE.test(json) ? wellFormed(parsed) : parsed;
}

/**
 * A surrogate written as a `\u` escape: the only way JSON text in UTF-8 carries one, and so the
 * only way a lone one (half an emoji, as a client cutting text by UTF-16 units leaves it) arrives.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * `value` with every lone surrogate replaced by U+FFFD, which PostgreSQL's text takes: stored as
 * sent, it fails there (and the whole batch with it) or is replaced differently on a retry.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return wellFormedText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(wellFormed);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [wellFormedText(key), wellFormed(item)]));
}

/** What a request's body watch settles: whether the client is still sending, and a way to stop watching. */
export interface BodyWatch {
  /** Aborts when the client goes away before the answer, or sends nothing of its body for the idle time; its reason is the error to answer. */
  signal: AbortSignal;
  stop(): void;
}

/**
 * Watches a request whose body the handler streams: a client that goes away (a cancelled CI job)
 * or stops sending (a stalled network) aborts the signal at once, so that the handler stops, removes
 * what it wrote and lets go of what it holds, instead of waiting on the body for good. Idle is
 * measured on the socket's bytes while the body is being read (a handler that pauses the body for
 * its own work is not the client's stall). A stalled request's connection closes after its answer.
 */
export function watchBody(req: Request, res: Response, idleMs: number): BodyWatch {
  const controller = new AbortController();
  const abort = (reason: HttpError) => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const gone = () => abort(new HttpError(400, 'body: the client went away before the request ended'));
  const onRequestClose = () => {
    if (!req.complete) gone();
  };
  const onResponseClose = () => {
    if (!res.writableFinished) gone();
  };
  req.once('aborted', gone);
  req.once('close', onRequestClose);
  res.once('close', onResponseClose);
  let lastBytes = req.socket?.bytesRead ?? 0;
  let lastChange = Date.now();
  const timer = setInterval(
    () => {
      const bytes = req.socket?.bytesRead ?? 0;
      // Paused by the handler, or read to its end: not the client's stall.
      if (bytes !== lastBytes || req.complete || req.readableFlowing !== true) {
        lastBytes = bytes;
        lastChange = Date.now();
        return;
      }
      if (Date.now() - lastChange < idleMs) return;
      if (!res.headersSent) res.setHeader('connection', 'close');
      abort(new HttpError(408, `body: nothing received for ${idleMs / 1000} s (PROCTOR_UPLOAD_IDLE_S): the upload is dropped`));
      // The answer goes out on a connection that then closes; a client that does not read it is cut off.
      setTimeout(() => req.destroy(), 1000).unref();
    },
    Math.min(1000, Math.max(50, idleMs / 4)),
  );
  timer.unref();
  return {
    signal: controller.signal,
    stop: () => {
      clearInterval(timer);
      req.off('aborted', gone);
      req.off('close', onRequestClose);
      res.off('close', onResponseClose);
    },
  };
}
