import type { Db, PreparedStatement } from './db.js';

/** A token bucket's state after a take of `count` tokens. */
export interface BucketTake {
  /** Tokens granted, 0 to `count`: the first `granted` of the requests counted are allowed. */
  granted: number;
  /** Tokens left after the take (fractional: the bucket refills continuously). */
  tokens: number;
}

/** Token buckets in the database, shared by every instance on it (ADR 0029, 0031). */
export interface RateLimitBuckets {
  /**
   * Refills `key`'s bucket for the time since its last take, then takes `count` tokens, or as
   * many whole tokens as it holds: `count` requests counted at once, in order.
   */
  take(key: string, perSecond: number, burst: number, count?: number): Promise<BucketTake>;
  /** Deletes buckets idle for longer than `idleSeconds` (full again by then); returns how many. */
  purgeIdle(idleSeconds: number): Promise<number>;
}

// One statement, one round trip, atomic per key: ON CONFLICT DO UPDATE locks the row and reads
// its latest committed version, so concurrent instances serialise on the bucket (SET reads the
// row as it was). The clock is the database's (statement_timestamp), the one clock every
// instance shares; `at` never moves back when a statement that started earlier gets the row
// lock later. $4 requests are counted at once (ADR 0031): granted = min($4, whole tokens held).
const refilled = 'LEAST($3::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)::float8) * $2::float8)';
const take: PreparedStatement = {
  name: 'rate_limit_take_many',
  text: `INSERT INTO rate_limit_buckets AS b (key, tokens, at, granted)
         VALUES ($1, $3::float8 - LEAST($4::int, floor($3::float8)::int), statement_timestamp(), LEAST($4::int, floor($3::float8)::int))
         ON CONFLICT (key) DO UPDATE SET
           granted = LEAST($4::int, floor(${refilled})::int),
           tokens = ${refilled} - LEAST($4::int, floor(${refilled})::int),
           at = GREATEST(b.at, statement_timestamp())
         RETURNING granted, tokens`,
};

export function createRateLimitBuckets(db: Db): RateLimitBuckets {
  return {
    async take(key, perSecond, burst, count = 1) {
      const [row] = await db.query<{ granted: number; tokens: number }>(take, [key, perSecond, burst, count]);
      return { granted: Number(row!.granted), tokens: Number(row!.tokens) };
    },
    async purgeIdle(idleSeconds) {
      const rows = await db.query(
        `DELETE FROM rate_limit_buckets WHERE at < statement_timestamp() - make_interval(secs => $1) RETURNING key`,
        [idleSeconds],
      );
      return rows.length;
    },
  };
}
