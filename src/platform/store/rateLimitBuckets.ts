import type { Db, PreparedStatement } from './db.js';

/** A token bucket's state after a take of `count` tokens. */
export interface BucketTake {
  /** Tokens granted, 0 to `count`: the first `granted` of the requests counted are allowed. */
  granted: number;
  /** Tokens taken ahead for requests still to come (ADR 0048): 0 unless all `count` were granted. */
  reserved: number;
  /** Tokens left after the take (fractional: the bucket refills continuously). */
  tokens: number;
}

/** Token buckets in the database, shared by every instance on it (ADR 0029, 0031). */
export interface RateLimitBuckets {
  /**
   * Refills `key`'s bucket for the time since its last take, then takes `count` tokens, or as
   * many whole tokens as it holds: `count` requests counted at once, in order. Then up to
   * `ahead` more, only from the whole tokens above half the burst (ADR 0048).
   */
  take(key: string, perSecond: number, burst: number, count?: number, ahead?: number): Promise<BucketTake>;
  /** Deletes buckets idle for longer than `idleSeconds` (full again by then); returns how many. */
  purgeIdle(idleSeconds: number): Promise<number>;
}

// One statement, one round trip, atomic per key: ON CONFLICT DO UPDATE locks the row and reads
// its latest committed version, so concurrent instances serialise on the bucket (SET reads the
// row as it was). The clock is the database's (statement_timestamp), the one clock every
// instance shares; `at` never moves back when a statement that started earlier gets the row
// lock later. $4 requests are counted at once (ADR 0031): granted = min($4, whole tokens held);
// then up to $5 tokens are taken ahead, only from the whole tokens above half the burst $3
// (ADR 0048). `granted` stores both; the caller splits them ($4 first).
const takeFrom = (held: string) => {
  const counted = `LEAST($4::int, floor(${held})::int)`;
  const ahead = `LEAST($5::int, GREATEST(0, floor(${held} - ${counted} - $3::float8 / 2)::int))`;
  return { granted: `${counted} + ${ahead}`, tokens: `${held} - ${counted} - ${ahead}` };
};
const fresh = takeFrom('$3::float8');
const refilled = takeFrom(
  'LEAST($3::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)::float8) * $2::float8)',
);
const take: PreparedStatement = {
  name: 'rate_limit_take_ahead',
  text: `INSERT INTO rate_limit_buckets AS b (key, tokens, at, granted)
         VALUES ($1, ${fresh.tokens}, statement_timestamp(), ${fresh.granted})
         ON CONFLICT (key) DO UPDATE SET
           granted = ${refilled.granted},
           tokens = ${refilled.tokens},
           at = GREATEST(b.at, statement_timestamp())
         RETURNING granted, tokens`,
};

export function createRateLimitBuckets(db: Db): RateLimitBuckets {
  return {
    async take(key, perSecond, burst, count = 1, ahead = 0) {
      const [row] = await db.query<{ granted: number; tokens: number }>(take, [key, perSecond, burst, count, ahead]);
      return splitTake(count, Number(row!.granted), Number(row!.tokens));
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

/** A take's tokens as the statement or script returns them: the `count` requests' first, the rest taken ahead. */
export function splitTake(count: number, taken: number, tokens: number): BucketTake {
  const granted = Math.min(count, taken);
  return { granted, reserved: taken - granted, tokens };
}
