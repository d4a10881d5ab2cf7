/**
 * The shared token bucket in the database and in Redis (ADR 0029): one atomic take per request, so requests
 * racing on one key from several connections never take more tokens than the bucket holds.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRateLimitBuckets } from '../../src/platform/store/rateLimitBuckets.js';
import { createRedisBuckets } from '../../src/platform/store/redisBuckets.js';
import { describeEachBackend } from '../support/databases.js';

// 0.001 tokens per second: no refill the tests could see, so every count is exact.
const slow = 0.001;

describeEachBackend('rate-limit buckets', (database) => {
  test('a full bucket of 3 allows 3 and refuses the 4th; tokens count down; keys are separate', async () => {
    const buckets = createRateLimitBuckets(database.db);
    const takes = [];
    for (let i = 0; i < 4; i++) takes.push(await buckets.take('partner:a', slow, 3));
    expect(takes.map((t) => t.granted)).toEqual([1, 1, 1, 0]);
    expect(takes.map((t) => Math.floor(t.tokens))).toEqual([2, 1, 0, 0]);
    expect((await buckets.take('partner:b', slow, 3)).granted).toBe(1);
  });

  test('40 requests racing from two connections on a bucket of 25: exactly 25 allowed', async () => {
    const other = await database.connect();
    try {
      const pools = [createRateLimitBuckets(database.db), createRateLimitBuckets(other)];
      const takes = await Promise.all(Array.from({ length: 40 }, (_, i) => pools[i % 2]!.take('partner:race', slow, 25)));
      expect(takes.filter((t) => t.granted === 1)).toHaveLength(25);
    } finally {
      await other.close();
    }
  });

  test('a take of several counts them in order: 4 of a full bucket of 10, then 8 of the 6 left grants 6, then none', async () => {
    const buckets = createRateLimitBuckets(database.db);
    const first = await buckets.take('partner:many', slow, 10, 4);
    expect(first.granted).toBe(4);
    expect(Math.floor(first.tokens)).toBe(6);
    const second = await buckets.take('partner:many', slow, 10, 8);
    expect(second.granted).toBe(6);
    expect(second.tokens).toBeLessThan(1);
    expect((await buckets.take('partner:many', slow, 10, 3)).granted).toBe(0);
    // A first take larger than the burst grants the burst.
    expect((await buckets.take('partner:many-new', slow, 5, 9)).granted).toBe(5);
  });

  test('takes of several racing from two connections on a bucket of 25: exactly 25 granted', async () => {
    const other = await database.connect();
    try {
      const pools = [createRateLimitBuckets(database.db), createRateLimitBuckets(other)];
      const takes = await Promise.all(Array.from({ length: 10 }, (_, i) => pools[i % 2]!.take('partner:race-many', slow, 25, 4)));
      expect(takes.reduce((sum, t) => sum + t.granted, 0)).toBe(25);
    } finally {
      await other.close();
    }
  });

  test('a take ahead (ADR 0048) takes only from whole tokens above half the burst, after the requests counted', async () => {
    const buckets = createRateLimitBuckets(database.db);
    expect(await buckets.take('partner:ahead', slow, 10, 1, 3)).toMatchObject({ granted: 1, reserved: 3 });
    // 6 held: one counted, none ahead (5 would be at half the burst).
    const second = await buckets.take('partner:ahead', slow, 10, 1, 3);
    expect(second).toMatchObject({ granted: 1, reserved: 0 });
    expect(Math.floor(second.tokens)).toBe(5);
    // A group larger than the tokens held: every whole token counted, none ahead.
    expect(await buckets.take('partner:ahead', slow, 10, 8, 3)).toMatchObject({ granted: 5, reserved: 0 });
    // A fresh bucket of 20: 4 counted, then up to 5 ahead of the 16 left (above 10).
    const fresh = await buckets.take('partner:ahead-new', slow, 20, 4, 5);
    expect(fresh).toMatchObject({ granted: 4, reserved: 5 });
    expect(Math.floor(fresh.tokens)).toBe(11);
    expect(await buckets.take('partner:ahead-new', slow, 20, 1, 5)).toMatchObject({ granted: 1, reserved: 0 });
  });

  test('takes ahead racing from two connections on a bucket of 25: exactly 25 taken in all, never more', async () => {
    const other = await database.connect();
    try {
      const pools = [createRateLimitBuckets(database.db), createRateLimitBuckets(other)];
      const takes = await Promise.all(Array.from({ length: 20 }, (_, i) => pools[i % 2]!.take('partner:race-ahead', slow, 25, 2, 4)));
      expect(takes.reduce((sum, t) => sum + t.granted + t.reserved, 0)).toBe(25);
      expect(takes.every((t) => t.reserved === 0 || t.granted === 2)).toBe(true);
    } finally {
      await other.close();
    }
  });

  test('the bucket refills at perSecond: 1000 per second gives a token back within a few ms', async () => {
    const buckets = createRateLimitBuckets(database.db);
    expect((await buckets.take('partner:fast', 1000, 1)).granted).toBe(1);
    let allowed = false;
    for (let i = 0; i < 200 && !allowed; i++) allowed = (await buckets.take('partner:fast', 1000, 1)).granted === 1;
    expect(allowed).toBe(true);
  });

  test('idle buckets are purged', async () => {
    const buckets = createRateLimitBuckets(database.db);
    await buckets.take('partner:idle', slow, 3);
    await database.db.query(`UPDATE rate_limit_buckets SET at = at - interval '1 hour'`);
    expect(await buckets.purgeIdle(60)).toBe(1);
  });
});

const redisUrl = process.env.MINIBRIDGE_TEST_REDIS_URL;

describe.skipIf(!redisUrl)('rate-limit buckets in Redis: the script takes as the statement does', () => {
  let redis: Redis;
  let buckets: ReturnType<typeof createRedisBuckets>;
  beforeAll(async () => {
    redis = new Redis(redisUrl!, { lazyConnect: true });
    await redis.connect();
    // A prefix of its own: parallel files and reruns never share a bucket.
    buckets = createRedisBuckets(redis, `test:${randomBytes(6).toString('hex')}:`);
  });
  afterAll(() => redis?.disconnect());

  test('counted first, then ahead only from whole tokens above half the burst (ADR 0048)', async () => {
    expect(await buckets.take('partner:ahead', slow, 10, 1, 3)).toMatchObject({ granted: 1, reserved: 3 });
    const second = await buckets.take('partner:ahead', slow, 10, 1, 3);
    expect(second).toMatchObject({ granted: 1, reserved: 0 });
    expect(Math.floor(second.tokens)).toBe(5);
    expect(await buckets.take('partner:ahead', slow, 10, 8, 3)).toMatchObject({ granted: 5, reserved: 0 });
    expect(await buckets.take('partner:ahead-new', slow, 20, 4, 5)).toMatchObject({ granted: 4, reserved: 5 });
  });

  test('takes ahead racing on a bucket of 25: exactly 25 taken in all', async () => {
    const takes = await Promise.all(Array.from({ length: 20 }, () => buckets.take('partner:race-ahead', slow, 25, 2, 4)));
    expect(takes.reduce((sum, t) => sum + t.granted + t.reserved, 0)).toBe(25);
  });
});
