import { replayWindowSeconds } from '../../wire/signing.js';

/**
 * The signatures accepted within the replay window, in memory: a signature seen before is a
 * replay. A signature's timestamp is at most the window old when first accepted, so it can be
 * forgotten once the timestamp is more than the window in the past (a replay then is stale).
 */
export class ReplayCache {
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  /** True the first time a digest is offered within the window; false for a replay. */
  remember(digest: string, timestampSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
    this.forgetExpired(nowSeconds);
    if (this.seen.has(digest)) return false;
    this.seen.set(digest, timestampSeconds + replayWindowSeconds());
    return true;
  }

  private forgetExpired(nowSeconds: number): void {
    // Once a second is enough: an entry only has to outlive the window.
    if (nowSeconds === this.lastSweep) return;
    this.lastSweep = nowSeconds;
    for (const [digest, expiresAt] of this.seen) {
      if (expiresAt < nowSeconds) this.seen.delete(digest);
    }
  }
}
