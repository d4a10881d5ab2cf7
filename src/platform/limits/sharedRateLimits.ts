import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import type { Store } from '../store/index.js';
import { createRedisBuckets } from '../store/redisBuckets.js';
import type { SharedBuckets, SharedLimits } from './rateLimiter.js';

/** PostgreSQL: idle buckets are purged on one counted request in this many, off the request's path. */
const purgeEvery = 1000;
/** At most one log line per this interval while the shared store is failing. */
const fallbackLogIntervalMs = 10_000;

export interface OpenedSharedLimits {
  /** Undefined on PGlite: one process, so the per-instance budgets are the whole budgets. */
  shared: SharedLimits | undefined;
  close(): Promise<void>;
}

/**
 * Where the rate-limit budgets live (ADR 0029): Redis when REDIS_URL is set, else the PostgreSQL
 * database the instances share, else (PGlite, a single instance) this process.
 */
export async function openSharedLimits(config: Config, store: Store, log: Logger, metrics: Metrics): Promise<OpenedSharedLimits> {
  let buckets: SharedBuckets | undefined;
  let close = async () => {};
  if (config.redisUrl) {
    const { Redis } = await import('ioredis');
    const redis = new Redis(config.redisUrl, {
      lazyConnect: true,
      // Refuse at once while disconnected instead of queueing: the request is then counted here.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // How long the limiter waits for Redis before counting the request here (ADR 0029).
      commandTimeout: config.redisCommandTimeoutMs,
      connectTimeout: 2_000,
    });
    // Connection errors are reported by the commands that fail; ioredis reconnects by itself.
    redis.on('error', () => {});
    try {
      await redis.connect();
    } catch (error) {
      log.warn({ err: error }, 'redis for the rate limits is unreachable: counting per instance until it answers (ADR 0029)');
    }
    buckets = { name: 'redis', ...createRedisBuckets(redis, config.redisKeyPrefix) };
    close = async () => {
      redis.disconnect();
    };
  } else if (store.db.backend === 'postgres') {
    let calls = 0;
    let longestRefill = 1;
    buckets = {
      name: 'postgres',
      take(key, perSecond, burst, count, ahead) {
        longestRefill = Math.max(longestRefill, Math.ceil(burst / perSecond));
        if (++calls % purgeEvery === 0)
          store.rateLimitBuckets
            .purgeIdle(longestRefill + 1)
            .catch((error: unknown) => log.warn({ err: error }, 'purging idle rate-limit buckets failed'));
        return store.rateLimitBuckets.take(key, perSecond, burst, count, ahead);
      },
    };
  }
  if (!buckets) return { shared: undefined, close };
  const name = buckets.name;
  let lastLog = -Infinity;
  return {
    shared: {
      buckets,
      onFallback(error) {
        metrics.rateLimitFallbacks.inc({ store: name });
        const now = performance.now();
        if (now - lastLog < fallbackLogIntervalMs) return;
        lastLog = now;
        log.warn({ err: error, store: name }, 'the shared rate-limit store failed: counting this instance’s own budget (ADR 0029)');
      },
    },
    close,
  };
}
