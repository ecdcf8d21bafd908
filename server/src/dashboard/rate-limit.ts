import type { Clock } from '../context.ts';

/**
 * At most `limit` takes per key within any `windowMs`, counted in this process (each HTTP worker
 * counts its own). Keys past `maxKeys` push out the oldest, so that a flood of keys holds bounded
 * memory.
 */
export class RateLimit {
  private readonly taken = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
    private readonly maxKeys = 10_000,
  ) {}

  /** Takes one for `key`: null when allowed, else the milliseconds until the next would be. */
  take(key: string): number | null {
    const now = this.clock().getTime();
    const recent = (this.taken.get(key) ?? []).filter((at) => at > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.taken.set(key, recent);
      return (recent[0] as number) + this.windowMs - now;
    }
    recent.push(now);
    this.taken.delete(key);
    this.taken.set(key, recent);
    if (this.taken.size > this.maxKeys) this.taken.delete(this.taken.keys().next().value as string);
    return null;
  }
}
