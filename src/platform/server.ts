import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { configFromEnv, type Config } from './config.js';
import { contractOperations } from '../contract/operations.js';
import { maxHeaderBytes } from '../contract/limits.js';
import { DeliveryWorker } from './delivery/worker.js';
import { reconcileBudget } from './payments/lifecycle.js';
import { Reconciler } from './payments/reconciler.js';
import { RecordsWorker } from './records/worker.js';
import { createApp } from './http/app.js';
import { appServerClasses } from './http/appServerClasses.js';
import { answerClientErrors } from './http/clientErrors.js';
import { trackConnections } from './http/connections.js';
import { contractRateLimits, createRateLimiters } from './limits/rateLimiter.js';
import { openSharedLimits } from './limits/sharedRateLimits.js';
import { createMetrics } from './observability/metrics.js';
import type { PlatformContext } from './context.js';
import { PartnerDirectory } from './dashboard/directory.js';
import { DEV_SECRETS_KEY } from './dashboard/secrets.js';
import { openSecretBox } from './dashboard/secretsKey.js';
import { loadRegistry } from './registry/loadRegistry.js';
import { checkReservationWindow } from './payments/reservationWindow.js';
import type { Registry } from './registry/registry.js';
import { openStore, type Store } from './store/index.js';

export interface RunningPlatform {
  url: string;
  platform: PlatformContext;
  server: Server;
  /** Graceful stop: refuse new work, finish requests in flight, stop the worker, close the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<Config>;
  /** A registry object instead of the file at config.registryPath. */
  registry?: Registry;
  log?: Logger;
  /**
   * The store, already being opened by the caller (`npm start` opens it first so PGlite boots
   * while the code loads); by default it is opened here from config. Closed if start-up fails.
   */
  store?: Promise<Store>;
}

/** Starts a platform instance: database migrated, contract compiled, HTTP listening, E6 worker running. */
export async function startPlatform(options: StartOptions = {}): Promise<RunningPlatform> {
  const config: Config = { ...configFromEnv(), ...options.config };
  const log = options.log ?? createLogger(config.logLevel);
  // The database opens (PGlite boots, PostgreSQL connects) while the registry and the contract are read.
  const opening =
    options.store ??
    openStore(
      { databaseUrl: config.databaseUrl, pgliteDataDir: config.dataDir, timeouts: config.databaseTimeouts },
      { idempotencyKeyTtlMs: config.retention.idempotency_keys * 86_400_000 },
    );
  let registry: Registry | undefined;
  try {
    registry = options.registry ?? (config.registryPath ? loadRegistry(config.registryPath) : undefined);
    contractOperations();
    checkReservationWindow(config.databaseTimeouts);
  } catch (error) {
    await opening.then(
      (store) => store.close(),
      () => undefined,
    );
    throw error;
  }
  const store = await opening;
  if (!config.secretsKey)
    log.warn('MINIBRIDGE_SECRETS_KEY is not set: partner secrets are sealed with the published development key (ADR 0027)');
  let partners: PartnerDirectory;
  try {
    const box = await openSecretBox(store, { key: config.secretsKey ?? DEV_SECRETS_KEY, previousKey: config.secretsKeyPrevious }, log);
    partners = new PartnerDirectory(store, box, log);
  } catch (error) {
    await store.close();
    throw error;
  }
  try {
    // The registry file (or the sandbox's) seeds the database; from then on the database rules (ADR 0027).
    if (registry) await partners.importRegistry(registry);
    await partners.start();
  } catch (error) {
    await partners.close();
    await store.close();
    throw error;
  }
  // Production (a registry file): name the partners moving money on Basic secrets alone (ADR 0038).
  const unsigned = config.registryPath ? partners.current.unsignedPaymentPartners() : [];
  if (unsigned.length > 0)
    log.warn(
      { partners: unsigned.slice(0, 50), count: unsigned.length },
      'partners take part in payments without request signing: enable it in the dashboard (signing.enabled with a signing secret)',
    );
  const metrics = createMetrics({
    pendingDeliveries: () => store.outbox.countPending(),
    stuckPayments: () => store.reconciliation.countStuck(),
  });
  // One line and one metric change per outage, however many statements it fails (ADR 0037).
  const stopReportingDatabase = store.db.availability.onChange((up) => {
    metrics.databaseUp.set(up ? 1 : 0);
    if (up) log.info('the database answers again; serving and delivering as before');
    else {
      metrics.databaseOutages.inc();
      log.error(
        'the database is unavailable: requests that need it are answered UNKNOWN_ERROR (retry later) until it is back; reconnecting',
      );
    }
  });
  const sharedLimits = await openSharedLimits(config, store, log, metrics);
  const contractLimits = contractRateLimits();
  const platform: PlatformContext = {
    config,
    store,
    get registry() {
      return partners.current;
    },
    partners,
    rateLimiters: createRateLimiters(
      {
        partner: config.rateLimit,
        failedAuthentication: config.failedAuthLimit,
        redelivery: contractLimits.redelivery,
        takeAheadSeconds: contractLimits.takeAheadSeconds,
        reconciliation: reconcileBudget(),
      },
      undefined,
      sharedLimits.shared,
    ),
    metrics,
    log,
    // The worker is made just below, before the server accepts anything that could wake it.
    wakeWorker: () => worker.wake(),
    accepting: true,
    handling: new Set(),
  };
  const worker = new DeliveryWorker(platform);
  const reconciler = new Reconciler(platform);
  const records = new RecordsWorker(platform);
  const listener = createApp(platform);
  const server = createServer(
    {
      // Requests and responses born with Express's prototypes, so no request swaps one (ADR 0036).
      ...appServerClasses(listener.app),
      // A request (headers and body) must arrive in full within the time-out: a client that
      // trickles its body is cut with a 408 (ADR 0015). Node checks at this interval.
      requestTimeout: config.requestTimeoutMs,
      // Past the contract's `x-max-header-bytes` Node refuses the head; clientErrors.ts answers 431.
      maxHeaderSize: maxHeaderBytes(),
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, Math.max(config.requestTimeoutMs / 4, 50)),
    },
    listener,
  );
  // Longer than the 60 s idle time-out of common load balancers, so a proxy never reuses a
  // connection the platform is closing at that instant (ADR 0010).
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server, log);
  const connections = trackConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  if (config.worker.enabled) worker.start();
  if (config.reconciler.enabled) reconciler.start();
  if (config.records.enabled) records.start();
  const address = server.address() as AddressInfo;
  // The port it listens on (PORT=0 lets the system choose): a partner's URL may not lead back to it.
  config.port = address.port;
  const url = `http://${address.family === 'IPv6' ? `[${address.address === '::' ? '::1' : address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address}:${address.port}`;
  log.info(
    { url, registry: partners.current, database: config.databaseUrl ? 'postgres' : `pglite ${config.dataDir}` },
    'minibridge platform listening',
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // One deadline for the whole stop (ADR 0037): requests in flight, then the worker and the
      // database, each get what is left of the grace, whatever the database or partners do.
      const deadline = performance.now() + config.shutdownGraceMs;
      const left = () => Math.max(0, deadline - performance.now());
      platform.accepting = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      connections.closeWhenIdle();
      const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
      await closed;
      clearTimeout(grace);
      // A client that left does not end its request's handling: finish it before the database closes.
      await settledWithin([...platform.handling], left());
      const finished = await settledWithin(
        [
          (async () => {
            await Promise.all([worker.stop(), reconciler.stop(), records.stop()]);
            await partners.close();
            await sharedLimits.close();
            stopReportingDatabase();
            await store.close();
          })(),
        ],
        left(),
      );
      if (finished) log.info('minibridge platform stopped');
      else
        log.warn(
          { grace_ms: config.shutdownGraceMs },
          'minibridge platform stopped at the end of its grace, before the worker or the database had closed',
        );
    })());
  return { url, platform, server, close };
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'minibridge' },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-user-access-token"]',
        'req.headers["x-minibridge-signature"]',
        'req.headers["webhook-signature"]',
        '*.secretKey',
        '*.signingSecrets',
      ],
      censor: '[redacted]',
    },
  });
}

/** Waits for `work` to settle, for at most `ms`; true when it did. */
async function settledWithin(work: Promise<unknown>[], ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    Promise.allSettled(work).then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}
