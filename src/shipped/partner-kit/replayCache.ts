import { replayExpiresAt } from '../../wire/signing.js';

/**
 * The signed messages accepted within the replay window, in memory: a message seen before is a
 * replay, whichever of a rotation's secrets signed the copy (the keys name messages, not
 * signatures). A key is kept until `replayExpiresAt` of its timestamp, the first instant a copy
 * of it would be stale on this clock, so no second of the window is left unguarded (ADR 0038).
 */
export class ReplayCache {
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  /** True the first time a key is offered within the window; false for a replay. */
  remember(digest: string, timestampSeconds: number, nowMs = Date.now()): boolean {
    this.forgetExpired(nowMs);
    const expiresAt = this.seen.get(digest);
    if (expiresAt !== undefined && expiresAt > nowMs) return false;
    this.seen.set(digest, replayExpiresAt(timestampSeconds));
    return true;
  }

  private forgetExpired(nowMs: number): void {
    // Once a second is enough: expired entries are also judged absent one by one above.
    const second = Math.floor(nowMs / 1000);
    if (second === this.lastSweep) return;
    this.lastSweep = second;
    for (const [digest, expiresAt] of this.seen) {
      if (expiresAt <= nowMs) this.seen.delete(digest);
    }
  }
}
