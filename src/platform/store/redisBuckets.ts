import type { Redis } from 'ioredis';
import { splitTake, type BucketTake } from './rateLimitBuckets.js';

/**
 * The token bucket as one Lua script: Redis runs it atomically, so instances sharing the server
 * serialise on each key, and the clock is the server's (TIME), the one clock they all share.
 * Fractional tokens come back as text: Redis turns a Lua number reply into an integer.
 * ARGV[4] requests are counted at once: the first `granted` of them are allowed. Then up to
 * ARGV[5] more are taken ahead, only from the whole tokens above half the burst (ADR 0048);
 * the reply's first element holds both, split by splitTake.
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
local granted = math.min(tonumber(ARGV[4]), math.floor(tokens))
if granted < 0 then
  granted = 0
end
local ahead = math.min(tonumber(ARGV[5]), math.floor(tokens - granted - burst / 2))
if ahead < 0 then
  ahead = 0
end
granted = granted + ahead
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {granted, tostring(tokens)}
`;

type TakeCommand = (key: string, rate: number, burst: number, ttlMs: number, count: number, ahead: number) => Promise<[number, string]>;

/** Token buckets in Redis (ADR 0029, 0031): one EVALSHA counts `count` requests of a key; idle keys expire once full. */
export function createRedisBuckets(redis: Redis, keyPrefix: string) {
  redis.defineCommand('minibridgeTakeTokens', { numberOfKeys: 1, lua: takeScript });
  // ioredis adds a defineCommand'd command to the client at run time; its types cannot know it.
  const command = (redis as unknown as { minibridgeTakeTokens: TakeCommand }).minibridgeTakeTokens.bind(redis);
  return {
    async take(key: string, perSecond: number, burst: number, count = 1, ahead = 0): Promise<BucketTake> {
      // A bucket idle this long is full again, so forgetting it changes nothing.
      const ttlMs = Math.ceil((burst / perSecond) * 1000) + 1000;
      const [taken, tokens] = await command(keyPrefix + key, perSecond, burst, ttlMs, count, ahead);
      return splitTake(count, Number(taken), Number(tokens));
    },
  };
}
