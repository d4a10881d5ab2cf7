import type { Db } from './db.js';
import type { Clock } from './time.js';

export interface ReplayGuard {
  /**
   * Remembers a request signature until expiresAt. False when it was already seen and has not
   * expired: the request is a replay.
   */
  remember(digest: string, expiresAt: Date): Promise<boolean>;
  /** Deletes signatures expired on every instance's clock (REPLAY_PURGE_GRACE_MS); returns how many. */
  purgeExpired(): Promise<number>;
  /** The clock expiry is judged by; the signature window must be judged by the same one (ADR 0038). */
  now(): Date;
}

/**
 * How far behind this instance's clock another instance's may be. Each instance judges a key's
 * expiry on its own clock, the same clock it judges the signature window on (ADR 0038), so a key
 * must stay in the table until every instance's clock has passed its expiry: a purge by an
 * instance whose clock runs ahead would otherwise hand a lagging one a replay in its window's
 * last moments. Rows kept longer cost only space: a key past its expiry counts as absent.
 */
export const REPLAY_PURGE_GRACE_MS = 5 * 60_000;

/** purgeEvery: remember() also purges on every purgeEvery-th call, keeping the table small. */
export function createReplayGuard(db: Db, clock: Clock, purgeEvery: number): ReplayGuard {
  let calls = 0;

  async function purgeExpired(): Promise<number> {
    const rows = await db.query('DELETE FROM replay_guard WHERE expires_at <= $1 RETURNING digest', [
      new Date(clock().getTime() - REPLAY_PURGE_GRACE_MS),
    ]);
    return rows.length;
  }

  return {
    async remember(digest, expiresAt) {
      calls += 1;
      if (calls % purgeEvery === 0) await purgeExpired();
      // An expired row for the same digest counts as absent, so it is renewed rather than kept.
      const rows = await db.query(
        `INSERT INTO replay_guard (digest, expires_at) VALUES ($1, $2)
         ON CONFLICT (digest) DO UPDATE SET expires_at = EXCLUDED.expires_at
           WHERE replay_guard.expires_at <= $3
         RETURNING digest`,
        [digest, expiresAt, clock()],
      );
      return rows.length > 0;
    },
    purgeExpired,
    now: clock,
  };
}
