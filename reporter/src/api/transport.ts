import http from 'node:http';
import https from 'node:https';
import { gzipSync } from 'node:zlib';
import { errorMessageOf, runEndedOf } from './wire.ts';

// The one HTTP client of everything that calls Proctor's API: the reporter, the agent and the
// action (which bundles it). No dependency: the reporter ships none.

// 500 too: a server that lost its database mid-request may answer it, and every request is idempotent.
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
// Answers that say the server is there but cannot serve now: an overload, a proxy with no backend, a
// database away. Not 500, which may be a request that fails every time.
const UNAVAILABLE_STATUS = new Set([429, 502, 503, 504]);

/** Whether a failure may pass by itself (the network, 429, a 5xx), as opposed to a refusal. */
export function isTransient(error: ApiError): boolean {
  return error.status === null || RETRYABLE_STATUS.has(error.status);
}

/** A request the server refused, or that could not be made: the one error of every Proctor client. */
export class ApiError extends Error {
  constructor(
    message: string,
    /** The HTTP status, or null for a network error. */
    readonly status: number | null,
    /** The server could not be reached within the connect budget: nothing more is tried. */
    readonly unreachable = false,
    /** The request's run has ended, as the answer's `code` says (`run_ended`), with its state when named; null otherwise. */
    readonly runEnded: { state: string | null } | null = null,
  ) {
    super(message);
  }
}

/**
 * Errors that say no connection to the server was made: it is down, the name does not resolve, or
 * the network has no route. A server that answers, even with an error, never causes one.
 */
const NO_CONNECTION = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'CONNECT_TIMEOUT']);

/**
 * The time a CI job may lose to a server it cannot connect to, shared by every request of the
 * process. While the tests run, waiting costs the job nothing, and connection failures are retried
 * as any network error. Once they have ended (`testsEnded`), a streak of connection failures with
 * no answer since goes on for the budget at most; then the server is taken for unreachable, and
 * what is left fails at once. Any answer from the server ends a streak: a server that answers,
 * even with errors, keeps its retries.
 */
export class ConnectBudget {
  private failingSince: number | null = null;
  private countingSince: number | null = null;
  private gaveUp: ApiError | null = null;
  private wake: () => void = () => {};
  /** Settles when the tests end: a wait between attempts is cut short then, to be measured against the budget. */
  private readonly ended = new Promise<void>((resolve) => (this.wake = resolve));

  constructor(readonly ms: number) {}

  /** Whether the tests still run: until they end, waiting for the server costs the job nothing. */
  get testsRunning(): boolean {
    return this.countingSince === null;
  }

  /** The tests have ended: from now on, time spent on a server that cannot be reached is the job's. */
  testsEnded(): void {
    this.countingSince ??= Date.now();
    this.wake();
  }

  /** The error every request meets once the budget is spent; null before. */
  get exhausted(): ApiError | null {
    return this.gaveUp;
  }

  /** What is left of the budget in this streak of failures: all of it outside one, or before the tests end. */
  remainingMs(): number {
    if (this.failingSince === null || this.countingSince === null) return this.ms;
    return Math.max(0, this.ms - (Date.now() - Math.max(this.failingSince, this.countingSince)));
  }

  answered(): void {
    this.failingSince = null;
  }

  /** A wait between attempts, cut short when the tests end. */
  wait(ms: number, sleep: (ms: number) => Promise<void>): Promise<void> {
    return this.countingSince === null ? Promise.race([sleep(ms), this.ended]) : sleep(Math.min(ms, this.remainingMs()));
  }

  /** A connection tried at `since` failed; answers the error that ends the upload once the budget is spent, else null. */
  failed(where: string, code: string, since: number): ApiError | null {
    this.failingSince ??= since;
    return this.countingSince !== null && this.remainingMs() === 0 ? this.giveUp(where, code) : null;
  }

  /** The server is taken for unreachable: this request and every later one fail with the answer. */
  giveUp(where: string, code: string): ApiError {
    this.gaveUp ??= new ApiError(
      `the server could not be reached (${code} on ${where}), so nothing more is sent (PROCTOR_CONNECT_BUDGET_S=${Math.round(this.ms / 1000)})`,
      null,
      true,
    );
    return this.gaveUp;
  }
}

export interface TransportOptions {
  url: string;
  apiKey: string;
  projectId: string | null;
  maxAttempts: number;
  maxBackoffMs: number;
  /** Shared by every request of the reporter; none: connection failures are retried like any network error. */
  budget?: ConnectBudget;
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

/** The bytes to send could not be read (a file gone): no retry brings them back. */
class UnreadableBodyError extends Error {}

/**
 * One request through node:http, whose global agent keeps connections alive. Lighter per request
 * than fetch, which matters beside the tests this reporter runs with. `send` writes the body.
 */
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

function request(
  method: Method,
  url: string,
  headers: Record<string, string>,
  send: (request: http.ClientRequest) => void,
  connectTimeoutMs = REQUEST_TIMEOUT_MS,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const outgoing = (target.protocol === 'https:' ? https : http).request(target, { method, headers, timeout: REQUEST_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const retryAfter = response.headers['retry-after'];
        resolve({
          status: response.statusCode ?? 0,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })));
    // A host that drops the connection's packets never refuses it: the connection itself gets what is left of the budget.
    outgoing.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => outgoing.destroy(Object.assign(new Error('no connection'), { code: 'CONNECT_TIMEOUT' })), connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    outgoing.on('error', reject);
    send(outgoing);
  });
}

type RetryOptions = Pick<TransportOptions, 'maxAttempts' | 'maxBackoffMs' | 'budget' | 'sleep'>;

/**
 * Sends until a 2xx answer: network errors and 429/500/502/503/504 are retried with bounded
 * backoff; any other failure is final at once. Connection failures also spend the connect budget,
 * and none is tried once it is spent. Every request sent this way is idempotent.
 */
async function withRetries(options: RetryOptions, where: string, once: (connectTimeoutMs: number) => Promise<Reply>): Promise<Reply> {
  const sleep = options.sleep ?? defaultSleep;
  const { budget } = options;
  let lastError: ApiError = new ApiError('not sent', null);
  let connectionFailed: string | null = null;
  // `counted` is what the attempts' bound applies to; `attempt` paces the backoff.
  for (let attempt = 0, counted = 0; counted < options.maxAttempts; attempt++, counted++) {
    if (budget?.exhausted) throw budget.exhausted;
    let retryAfter: string | null = null;
    let unavailable = false;
    const triedAt = Date.now();
    try {
      const reply = await once(budget ? Math.max(1, budget.remainingMs()) : REQUEST_TIMEOUT_MS);
      budget?.answered();
      connectionFailed = null;
      if (reply.status >= 200 && reply.status < 300) return reply;
      const message = errorMessageOf(reply.text) ?? http.STATUS_CODES[reply.status] ?? 'no message';
      lastError = new ApiError(`HTTP ${reply.status} from ${where}: ${message}`, reply.status, false, runEndedOf(reply.text));
      if (!RETRYABLE_STATUS.has(reply.status)) throw lastError;
      retryAfter = reply.retryAfter;
      unavailable = UNAVAILABLE_STATUS.has(reply.status);
    } catch (error) {
      if (error instanceof UnreadableBodyError) throw new ApiError(`could not read the file: ${error.message}`, null);
      if (error instanceof ApiError && !RETRYABLE_STATUS.has(error.status ?? 0)) throw error;
      if (!(error instanceof ApiError)) {
        const code = (error as NodeJS.ErrnoException).code;
        lastError = new ApiError(`network error on ${where}: ${code ?? (error as Error).message}`, null);
        connectionFailed = code && NO_CONNECTION.has(code) ? code : null;
        const spent = budget && connectionFailed ? budget.failed(where, connectionFailed, triedAt) : null;
        if (spent) throw spent;
        unavailable = connectionFailed !== null;
      }
    }
    // A server that is down or says "later" (its database restarting, a deploy) costs nothing while
    // the tests run: such an attempt is not counted, so an outage as long as the tests loses nothing.
    if (unavailable && budget?.testsRunning) counted--;
    if (counted < options.maxAttempts - 1) {
      const wait = backoff(attempt, options.maxBackoffMs, retryAfter);
      await (budget ? budget.wait(wait, sleep) : sleep(wait));
    }
  }
  // Every attempt failed to connect: the server is unreachable, for the requests to come too.
  if (budget && connectionFailed) throw budget.giveUp(where, connectionFailed);
  throw lastError;
}

function headersOf(options: TransportOptions): Record<string, string> {
  return {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    ...(options.projectId ? { 'x-project-id': options.projectId } : {}),
  };
}

/** Any call of the API with a JSON body (or none), retried as `withRetries` says; its JSON answer. */
export async function callJson<T>(options: TransportOptions, method: Method, path: string, body?: unknown): Promise<T> {
  const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
  const headers = { ...headersOf(options), ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) };
  const reply = await withRetries(options, path, (connectMs) =>
    request(method, `${options.url}${path}`, headers, (outgoing) => outgoing.end(payload ?? undefined), connectMs),
  );
  return (reply.text ? JSON.parse(reply.text) : null) as T;
}

/**
 * POSTs a JSON body with headers of the caller's own (a protocol's: MCP's Accept and version) and
 * answers the reply's text as it is, retried as `withRetries` says.
 */
export async function postForText(options: TransportOptions, path: string, body: unknown, extraHeaders: Record<string, string>): Promise<string> {
  const payload = Buffer.from(JSON.stringify(body));
  const headers = { ...headersOf(options), ...extraHeaders, 'content-type': 'application/json', 'content-length': String(payload.length) };
  const reply = await withRetries(options, path, (connectMs) =>
    request('POST', `${options.url}${path}`, headers, (outgoing) => outgoing.end(payload), connectMs),
  );
  return reply.text;
}

/** POSTs gzipped JSON to the server, retried as `withRetries` says. */
export function postJson<T>(options: TransportOptions, path: string, body: unknown): Promise<T> {
  return postGzipped<T>(options, path, gzipSync(JSON.stringify(body)));
}

/** GETs JSON from the server, retried as `withRetries` says. */
export function getJson<T>(options: TransportOptions, path: string): Promise<T> {
  return callJson<T>(options, 'GET', path);
}

/** As postJson, for a body already serialised and gzipped. */
export async function postGzipped<T>(options: TransportOptions, path: string, payload: Buffer): Promise<T> {
  const headers = { ...headersOf(options), 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(payload.length) };
  const reply = await withRetries(options, path, (connectMs) =>
    request('POST', `${options.url}${path}`, headers, (outgoing) => outgoing.end(payload), connectMs),
  );
  return (reply.text ? JSON.parse(reply.text) : null) as T;
}

/**
 * PUTs bytes to a signed URL (no key: the signature authorises), with the headers it asks for,
 * streamed from `open` afresh on every attempt, retried as `withRetries` says.
 */
export async function putSigned(
  options: RetryOptions,
  url: string,
  open: () => NodeJS.ReadableStream,
  size: number,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  const headers = { 'content-type': 'application/octet-stream', ...extraHeaders, 'content-length': String(size) };
  await withRetries(options, new URL(url).pathname, (connectMs) => request('PUT', url, headers, streamedFrom(open), connectMs));
}

/** Sends a body opened afresh for the attempt; a file that cannot be read ends the request, for good. */
function streamedFrom(open: () => NodeJS.ReadableStream): (outgoing: http.ClientRequest) => void {
  return (outgoing) => {
    const body = open();
    body.on('error', (error) => outgoing.destroy(new UnreadableBodyError((error as NodeJS.ErrnoException).code ?? (error as Error).message)));
    body.pipe(outgoing);
  };
}

/**
 * POSTs a body streamed from `open` afresh on every attempt (files too large to hold), with the
 * key, retried as `withRetries` says; its JSON answer. The request must be idempotent.
 */
export async function postStream<T>(options: TransportOptions, path: string, contentType: string, open: () => NodeJS.ReadableStream, size: number): Promise<T> {
  const headers = { ...headersOf(options), 'content-type': contentType, 'content-length': String(size) };
  const reply = await withRetries(options, path.split('?')[0] as string, (connectMs) =>
    request('POST', `${options.url}${path}`, headers, streamedFrom(open), connectMs),
  );
  return (reply.text ? JSON.parse(reply.text) : null) as T;
}

/** POSTs nothing to a signed URL (a confirmation), retried as `withRetries` says. */
export async function postSigned(options: RetryOptions, url: string): Promise<void> {
  await withRetries(options, new URL(url).pathname, (connectMs) => request('POST', url, { 'content-length': '0' }, (outgoing) => outgoing.end(), connectMs));
}
