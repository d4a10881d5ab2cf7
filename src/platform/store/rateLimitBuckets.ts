import type { Db, PreparedStatement } from './db.js';

/** A token bucket's state after one request took (or failed to take) a token. */
export interface BucketTake {
  allowed: boolean;
  /** Tokens left after this request (fractional: the bucket refills continuously). */
  tokens: number;
}

/** Token buckets in the database, shared by every instance on it (ADR 0029). */
export interface RateLimitBuckets {
  /** Refills `key`'s bucket for the time since its last request and takes one token if it holds one. */
  take(key: string, perSecond: number, burst: number): Promise<BucketTake>;
  /** Deletes buckets idle for longer than `idleSeconds` (full again by then); returns how many. */
  purgeIdle(idleSeconds: number): Promise<number>;
}

// One statement, one round trip, atomic per key: ON CONFLICT DO UPDATE locks the row and reads
// its latest committed version, so concurrent instances serialise on the bucket. The clock is
// the database's (statement_timestamp), the one clock every instance shares; `at` never moves
// back when a statement that started earlier gets the row lock later.
const take: PreparedStatement = {
  name: 'rate_limit_take',
  text: `INSERT INTO rate_limit_buckets AS b (key, tokens, at, allowed)
         VALUES ($1, $3::float8 - 1, statement_timestamp(), true)
         ON CONFLICT (key) DO UPDATE SET
           allowed = LEAST($3::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)::float8) * $2::float8) >= 1,
           tokens = LEAST($3::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)::float8) * $2::float8)
             - CASE WHEN LEAST($3::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)::float8) * $2::float8) >= 1
                    THEN 1 ELSE 0 END,
           at = GREATEST(b.at, statement_timestamp())
         RETURNING allowed, tokens`,
};

export function createRateLimitBuckets(db: Db): RateLimitBuckets {
  return {
    async take(key, perSecond, burst) {
      const [row] = await db.query<{ allowed: boolean; tokens: number }>(take, [key, perSecond, burst]);
      return { allowed: row!.allowed, tokens: Number(row!.tokens) };
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
