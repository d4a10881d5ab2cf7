/**
 * Token buckets per calling partner (ADR 0010): `ratePerSecond` sustained with bursts of `burst`,
 * per platform instance. Buckets idle long enough to be full again are dropped.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = 0;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes a token for `key`; returns 0 when allowed, else the whole seconds to wait. */
  take(key: string): number {
    const now = this.now();
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
  }

  private sweep(now: number): void {
    const refillMs = (this.burst / this.ratePerSecond) * 1000;
    if (now - this.lastSweep < refillMs) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.at > refillMs) this.buckets.delete(key);
  }
}
