/**
 * Takes work from a queue in the database: `step` does one item and says whether there was one. It
 * drains the queue every `pollMs` and whenever woken, one drain at a time; a wake during a drain
 * makes it drain again after. `stop` waits for the drain under way. A failure is reported once
 * until a drain succeeds again (a database outage would otherwise log every poll).
 */
export class DrainLoop {
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  private failing = false;

  constructor(
    private readonly step: () => Promise<boolean>,
    private readonly pollMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.timer.unref();
    this.wake();
  }

  wake(): void {
    if (this.stopping) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopping && (await this.step()));
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.onError(error);
      this.failing = true;
    }
  }
}
