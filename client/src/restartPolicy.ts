/**
 * When the server process dies: restart after a growing delay, and give up after too many crashes in a
 * window, so a server that dies on start does not spin. A restart the user asks for resets it.
 */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    private readonly maxCrashes = 5,
    private readonly windowMs = 3 * 60_000,
    private readonly baseDelayMs = 500,
    private readonly maxDelayMs = 15_000,
  ) {}

  /** Records a crash at `now`; returns the delay before restarting, or undefined to give up. */
  crashed(now: number): number | undefined {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    if (this.crashes.length > this.maxCrashes) return undefined;
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (this.crashes.length - 1));
  }

  reset(): void {
    this.crashes = [];
  }
}
