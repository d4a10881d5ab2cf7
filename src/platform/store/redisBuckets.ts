import type { Redis } from 'ioredis';
import type { BucketTake } from './rateLimitBuckets.js';

/**
 * The token bucket as one Lua script: Redis runs it atomically, so instances sharing the server
 * serialise on each key, and the clock is the server's (TIME), the one clock they all share.
 * Fractional tokens come back as text: Redis turns a Lua number reply into an integer.
 */
const takeScript = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1])
local at = tonumber(bucket[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
  at = now
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {allowed, tostring(tokens)}
`;

type TakeCommand = (key: string, rate: number, burst: number, ttlMs: number) => Promise<[number, string]>;

/** Token buckets in Redis (ADR 0029): one EVALSHA per counted request; idle keys expire once full. */
export function createRedisBuckets(redis: Redis, keyPrefix: string) {
  redis.defineCommand('minibridgeTakeToken', { numberOfKeys: 1, lua: takeScript });
  const command = (redis as unknown as { minibridgeTakeToken: TakeCommand }).minibridgeTakeToken.bind(redis);
  return {
    async take(key: string, perSecond: number, burst: number): Promise<BucketTake> {
      // A bucket idle this long is full again, so forgetting it changes nothing.
      const ttlMs = Math.ceil((burst / perSecond) * 1000) + 1000;
      const [allowed, tokens] = await command(keyPrefix + key, perSecond, burst, ttlMs);
      return { allowed: allowed === 1, tokens: Number(tokens) };
    },
  };
}
