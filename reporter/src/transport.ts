import http from 'node:http';
import https from 'node:https';
import { gzipSync } from 'node:zlib';
import { errorMessageOf } from './wire.ts';

// 500 too: a server that lost its database mid-request may answer it, and every request is idempotent.
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

export class DeliveryError extends Error {
  constructor(
    message: string,
    /** The HTTP status, or null for a network error. */
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface TransportOptions {
  url: string;
  apiKey: string;
  projectId: string | null;
  maxAttempts: number;
  maxBackoffMs: number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function backoff(attempt: number, maxMs: number, retryAfter: string | null): number {
  const seconds = retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : null;
  const exponential = Math.min(maxMs, 250 * 2 ** attempt);
  return Math.min(maxMs, seconds ?? exponential * (0.75 + Math.random() * 0.5));
}

const REQUEST_TIMEOUT_MS = 30_000;

interface Reply {
  status: number;
  retryAfter: string | null;
  text: string;
}

/**
 * One POST through node:http, whose global agent keeps connections alive. Lighter per request
 * than fetch, which matters beside the tests this reporter runs with.
 */
function post(url: string, headers: Record<string, string>, payload: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = (target.protocol === 'https:' ? https : http).request(
      target,
      { method: 'POST', headers: { ...headers, 'content-length': String(payload.length) }, timeout: REQUEST_TIMEOUT_MS },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const retryAfter = response.headers['retry-after'];
          resolve({ status: response.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : null, text: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    request.on('timeout', () => request.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })));
    request.on('error', reject);
    request.end(payload);
  });
}

/**
 * POSTs gzipped JSON to the server. Network errors and 429/500/502/503/504 are retried with bounded
 * backoff; any other failure is final at once. Every request is idempotent on the server.
 */
export function postJson<T>(options: TransportOptions, path: string, body: unknown): Promise<T> {
  return postGzipped<T>(options, path, gzipSync(JSON.stringify(body)));
}

/** As postJson, for a body already serialised and gzipped. */
export async function postGzipped<T>(options: TransportOptions, path: string, payload: Buffer): Promise<T> {
  const sleep = options.sleep ?? defaultSleep;
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    'content-type': 'application/json',
    'content-encoding': 'gzip',
    ...(options.projectId ? { 'x-project-id': options.projectId } : {}),
  };
  let lastError: DeliveryError = new DeliveryError('not sent', null);
  for (let attempt = 0; attempt < options.maxAttempts; attempt++) {
    let retryAfter: string | null = null;
    try {
      const reply = await post(`${options.url}${path}`, headers, payload);
      if (reply.status >= 200 && reply.status < 300) return (reply.text ? JSON.parse(reply.text) : null) as T;
      const message = errorMessageOf(reply.text) ?? http.STATUS_CODES[reply.status] ?? 'no message';
      lastError = new DeliveryError(`HTTP ${reply.status} from ${path}: ${message}`, reply.status);
      if (!RETRYABLE_STATUS.has(reply.status)) throw lastError;
      retryAfter = reply.retryAfter;
    } catch (error) {
      if (error instanceof DeliveryError && !RETRYABLE_STATUS.has(error.status ?? 0)) throw error;
      if (!(error instanceof DeliveryError)) {
        const code = (error as NodeJS.ErrnoException).code;
        lastError = new DeliveryError(`network error on ${path}: ${code ?? (error as Error).message}`, null);
      }
    }
    if (attempt < options.maxAttempts - 1) await sleep(backoff(attempt, options.maxBackoffMs, retryAfter));
  }
  throw lastError;
}


/** The bytes to send could not be read (a file gone): no retry brings them back. */
class UnreadableBodyError extends Error {}

/** One PUT of a body that `open` streams, answered with the reply (no key: the URL is signed). */
function put(url: string, open: () => NodeJS.ReadableStream, size: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = (target.protocol === 'https:' ? https : http).request(
      target,
      { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) }, timeout: REQUEST_TIMEOUT_MS },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const retryAfter = response.headers['retry-after'];
          resolve({ status: response.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : null, text: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    request.on('timeout', () => request.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })));
    request.on('error', reject);
    const body = open();
    body.on('error', (error) => request.destroy(new UnreadableBodyError((error as NodeJS.ErrnoException).code ?? (error as Error).message)));
    body.pipe(request);
  });
}

/**
 * PUTs bytes to a signed URL, streamed from `open` afresh on every attempt. Retried as `postJson`
 * is: network errors and 429/500/502/503/504, with bounded backoff.
 */
export async function putSigned(options: Pick<TransportOptions, 'maxAttempts' | 'maxBackoffMs' | 'sleep'>, url: string, open: () => NodeJS.ReadableStream, size: number): Promise<void> {
  const sleep = options.sleep ?? defaultSleep;
  const where = new URL(url).pathname;
  let lastError: DeliveryError = new DeliveryError('not sent', null);
  for (let attempt = 0; attempt < options.maxAttempts; attempt++) {
    let retryAfter: string | null = null;
    try {
      const reply = await put(url, open, size).catch((error: unknown) => {
        if (error instanceof UnreadableBodyError) throw new DeliveryError(`could not read the file: ${error.message}`, null);
        throw error;
      });
      if (reply.status >= 200 && reply.status < 300) return;
      lastError = new DeliveryError(`HTTP ${reply.status} from ${where}: ${errorMessageOf(reply.text) ?? http.STATUS_CODES[reply.status] ?? 'no message'}`, reply.status);
      if (!RETRYABLE_STATUS.has(reply.status)) throw lastError;
      retryAfter = reply.retryAfter;
    } catch (error) {
      if (error instanceof DeliveryError && !RETRYABLE_STATUS.has(error.status ?? 0)) throw error;
      if (!(error instanceof DeliveryError)) {
        const code = (error as NodeJS.ErrnoException).code;
        lastError = new DeliveryError(`network error on ${where}: ${code ?? (error as Error).message}`, null);
      }
    }
    if (attempt < options.maxAttempts - 1) await sleep(backoff(attempt, options.maxBackoffMs, retryAfter));
  }
  throw lastError;
}
