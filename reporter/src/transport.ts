import { gzipSync } from 'node:zlib';

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

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

/**
 * POSTs gzipped JSON to the server. Network errors and 429/502/503/504 are retried with bounded
 * backoff; any other failure is final at once. Every request is idempotent on the server.
 */
export async function postJson<T>(options: TransportOptions, path: string, body: unknown): Promise<T> {
  const sleep = options.sleep ?? defaultSleep;
  const payload = gzipSync(JSON.stringify(body));
  let lastError: DeliveryError = new DeliveryError('not sent', null);
  for (let attempt = 0; attempt < options.maxAttempts; attempt++) {
    let retryAfter: string | null = null;
    try {
      const response = await fetch(`${options.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          ...(options.projectId ? { 'x-project-id': options.projectId } : {}),
        },
        body: payload,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.ok) return (text ? JSON.parse(text) : null) as T;
      const message = extractMessage(text) ?? response.statusText;
      lastError = new DeliveryError(`HTTP ${response.status} from ${path}: ${message}`, response.status);
      if (!RETRYABLE_STATUS.has(response.status)) throw lastError;
      retryAfter = response.headers.get('retry-after');
    } catch (error) {
      if (error instanceof DeliveryError && !RETRYABLE_STATUS.has(error.status ?? 0)) throw error;
      if (!(error instanceof DeliveryError)) {
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        lastError = new DeliveryError(`network error on ${path}: ${cause ?? (error as Error).message}`, null);
      }
    }
    if (attempt < options.maxAttempts - 1) await sleep(backoff(attempt, options.maxBackoffMs, retryAfter));
  }
  throw lastError;
}

function extractMessage(text: string): string | null {
  try {
    const body = JSON.parse(text) as { error?: string | { message?: string } };
    return typeof body.error === 'string' ? body.error : (body.error?.message ?? null);
  } catch {
    return null;
  }
}
