import { requestTimeoutMs } from '../contract/limits.js';
import { contractRateLimits } from './limits/rateLimiter.js';
import { retentionFromEnv, type RetentionPeriods } from './records/policy.js';
import { defaultDatabaseTimeouts, type DatabaseTimeouts } from './store/db.js';

/**
 * Configuration from the environment (documented in the README). Without MINIBRIDGE_REGISTRY the
 * platform starts in sandbox mode: the sandbox registry and simulated partners.
 */
export interface Config {
  /** Where the platform listens; once it listens, the port it got (PORT=0 lets the system choose). */
  port: number;
  host: string;
  /** PostgreSQL URL; without it the embedded PGlite database in `dataDir` is used. */
  databaseUrl: string | undefined;
  /** How long PostgreSQL may take to give a connection and to answer a statement (ADR 0037). */
  databaseTimeouts: DatabaseTimeouts;
  dataDir: string;
  /** Redis URL (REDIS_URL); when set, the rate-limit budgets are shared there instead of in the database (ADR 0029). */
  redisUrl: string | undefined;
  /** Prefix of the rate-limit keys in Redis, so several deployments can share one server. */
  /** How long a rate-limit take waits for Redis before the instance counts it itself (ADR 0029). */
  redisCommandTimeoutMs: number;
  redisKeyPrefix: string;
  registryPath: string | undefined;
  adminToken: string | undefined;
  /** MINIBRIDGE_SECRETS_KEY: 32 bytes, base64; seals partner secrets at rest (ADR 0027). Without it, the published development key. */
  secretsKey: string | undefined;
  /** MINIBRIDGE_SECRETS_KEY_PREVIOUS: while rotating the key, the one it replaces; start-up re-seals under the new one (ADR 0038). */
  secretsKeyPrevious: string | undefined;
  logLevel: string;
  /** Express `trust proxy`: whether X-Forwarded-For names the caller (IP allow-lists). */
  trustProxy: boolean | string;
  /** Requests per authenticated partner (or admin token), shared by the instances (ADR 0029); the contract's `x-rate-limits.partner`. */
  rateLimit: { perSecond: number; burst: number };
  /** Failed authentications per source address, shared by the instances (ADR 0029); the contract's `x-rate-limits.failedAuthentication`. */
  failedAuthLimit: { perSecond: number; burst: number };
  worker: { pollMs: number; batchSize: number; leaseMs: number; enabled: boolean };
  /** The platform's own status queries of payments left in process (ADR 0039). */
  reconciler: { pollMs: number; batchSize: number; enabled: boolean };
  /** How long each kind of record is kept, in days (`MINIBRIDGE_RETENTION_<KIND>_DAYS`, ADR 0041). */
  retention: RetentionPeriods;
  /**
   * The records worker (ADR 0041): closes statement days and purges aged records in batches of
   * `batchSize`, resting `restRatio` times as long as each batch took (so it takes at most
   * 1/(1+restRatio) of the database time it could).
   */
  records: { pollMs: number; batchSize: number; restRatio: number; enabled: boolean };
  shutdownGraceMs: number;
  /** How long a client may take to send a whole request, headers and body; the contract's `x-request-timeout-ms` (ADR 0015). */
  requestTimeoutMs: number;
  /**
   * The platform is the sandbox, listening on loopback alone: partners may register loopback URLs
   * for their own servers (ADR 0043). Set only by sandbox mode (src/main.ts), never from the
   * environment, so a deployment cannot turn it on.
   */
  sandboxLoopback: boolean;
}

/** Where the platform listens without PORT. */
export const DEFAULT_PORT = 8080;

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const limits = contractRateLimits();
  return {
    port: integer(env.PORT, DEFAULT_PORT),
    host: env.HOST ?? '0.0.0.0',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseTimeouts: {
      connectMs: integer(env.MINIBRIDGE_DATABASE_CONNECT_TIMEOUT_MS, defaultDatabaseTimeouts.connectMs),
      statementMs: integer(env.MINIBRIDGE_DATABASE_STATEMENT_TIMEOUT_MS, defaultDatabaseTimeouts.statementMs),
    },
    dataDir: env.MINIBRIDGE_DATA_DIR ?? '.data/pglite',
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.MINIBRIDGE_REDIS_PREFIX ?? 'minibridge:ratelimit:',
    redisCommandTimeoutMs: integer(env.MINIBRIDGE_REDIS_TIMEOUT_MS, 250),
    registryPath: env.MINIBRIDGE_REGISTRY || undefined,
    adminToken: env.MINIBRIDGE_ADMIN_TOKEN || undefined,
    secretsKey: env.MINIBRIDGE_SECRETS_KEY || undefined,
    secretsKeyPrevious: env.MINIBRIDGE_SECRETS_KEY_PREVIOUS || undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
    trustProxy: env.MINIBRIDGE_TRUST_PROXY === 'true' ? true : (env.MINIBRIDGE_TRUST_PROXY ?? false),
    rateLimit: {
      perSecond: integer(env.MINIBRIDGE_RATE_LIMIT, limits.partner.perSecond),
      burst: integer(env.MINIBRIDGE_RATE_BURST, limits.partner.burst),
    },
    failedAuthLimit: {
      perSecond: integer(env.MINIBRIDGE_FAILED_AUTH_LIMIT, limits.failedAuthentication.perSecond),
      burst: integer(env.MINIBRIDGE_FAILED_AUTH_BURST, limits.failedAuthentication.burst),
    },
    worker: {
      pollMs: integer(env.MINIBRIDGE_WORKER_POLL_MS, 250),
      batchSize: integer(env.MINIBRIDGE_WORKER_BATCH, 50),
      leaseMs: 60_000,
      enabled: env.MINIBRIDGE_WORKER !== 'off',
    },
    reconciler: {
      pollMs: integer(env.MINIBRIDGE_RECONCILER_POLL_MS, 1_000),
      batchSize: integer(env.MINIBRIDGE_RECONCILER_BATCH, 50),
      enabled: env.MINIBRIDGE_RECONCILER !== 'off',
    },
    retention: retentionFromEnv(env),
    records: {
      // At least 1: a batch of 0 purges nothing and counts as full (the worker never rests), a poll of 0 spins.
      pollMs: positive('MINIBRIDGE_RECORDS_POLL_MS', env.MINIBRIDGE_RECORDS_POLL_MS, 60_000),
      batchSize: positive('MINIBRIDGE_RECORDS_BATCH', env.MINIBRIDGE_RECORDS_BATCH, 1_000),
      restRatio: integer(env.MINIBRIDGE_RECORDS_REST_RATIO, 19),
      enabled: env.MINIBRIDGE_RECORDS !== 'off',
    },
    shutdownGraceMs: integer(env.MINIBRIDGE_SHUTDOWN_GRACE_MS, 10_000),
    requestTimeoutMs: integer(env.MINIBRIDGE_REQUEST_TIMEOUT_MS, requestTimeoutMs()),
    sandboxLoopback: false,
  };
}

function integer(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`expected a non-negative integer, got ${value}`);
  return parsed;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new Error(`${name}=${value}: expected a whole number from 1`);
  return parsed;
}
