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
