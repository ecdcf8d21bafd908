import { createHash } from 'node:crypto';

/** A map that forgets its least recently used entries past `capacity`. */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }
}

export interface RenderedBadge {
  body: Buffer;
  contentType: string;
  etag: string;
}

export function etagOf(key: string): string {
  return `"${createHash('sha1').update(key).digest('base64url')}"`;
}

/**
 * Renders each client may cost: a token bucket per client address (`capacity` at once, `perSecond`
 * after). A PNG render is most of a CPU core for 25 ms, and a label of one's own makes every
 * request a render: without a budget, a few clients take the server from everyone else.
 */
export class RenderBudget {
  private readonly buckets: LruCache<{ tokens: number; at: number }>;

  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
    clients = 10_000,
  ) {
    this.buckets = new LruCache(clients);
  }

  /** Takes one render for `client` at `nowMs`; returns the seconds to wait when there is none. */
  take(client: string, nowMs: number): { ok: true } | { ok: false; retryAfterS: number } {
    const last = this.buckets.get(client) ?? { tokens: this.capacity, at: nowMs };
    const tokens = Math.min(this.capacity, last.tokens + ((nowMs - last.at) / 1000) * this.perSecond);
    if (tokens < 1) {
      this.buckets.set(client, { tokens, at: nowMs });
      return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - tokens) / this.perSecond)) };
    }
    this.buckets.set(client, { tokens: tokens - 1, at: nowMs });
    return { ok: true };
  }
}
