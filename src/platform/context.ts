import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { PartnerDirectory } from './dashboard/directory.js';
import type { RateLimiters } from './limits/rateLimiter.js';
import type { Metrics } from './observability/metrics.js';
import type { Registry } from './registry/registry.js';
import type { Store } from './store/index.js';

/** What the operations and the worker share: one per platform process. */
export interface PlatformContext {
  config: Config;
  store: Store;
  /** The current snapshot of the partners (re-read when any instance changes them; ADR 0028). */
  readonly registry: Registry;
  /** The partners in the database, their snapshot and the secret box (ADR 0027); absent in rigs without the dashboard. */
  partners?: PartnerDirectory;
  /** Authenticated partners' budgets and failed authentications' budgets by source (ADR 0017). */
  rateLimiters: RateLimiters;
  metrics: Metrics;
  log: Logger;
  /** Tells the E6 worker a delivery was just queued (lower latency than its poll). */
  wakeWorker(): void;
  /** False once shutdown began: /readyz answers not_ready. */
  accepting: boolean;
  /**
   * Operations being handled. A graceful stop waits for them before it closes the database,
   * including those whose client has gone: an E1 whose host app already created the order
   * payment must still record it.
   */
  readonly handling: Set<Promise<void>>;
}
