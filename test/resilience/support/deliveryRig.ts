/**
 * The E6 worker on its own, driven tick by tick: an in-memory store and the worker share a clock
 * the test moves by hand, and one HTTP server plays any number of miniapp servers, each with a
 * behaviour the test sets (answer, fail, hang until released, answer after a delay). The server
 * counts the attempts each miniapp has open at once.
 */
import { once } from 'node:events';
import { orderCompletionBody } from '../../../src/platform/payments/settlement.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Config } from '../../../src/platform/config.js';
import { DeliveryWorker } from '../../../src/platform/delivery/worker.js';
import { createRateLimiters, contractRateLimits } from '../../../src/platform/limits/rateLimiter.js';
import { createMetrics } from '../../../src/platform/observability/metrics.js';
import { reconcileBudget } from '../../../src/platform/payments/lifecycle.js';
import type { PlatformContext } from '../../../src/platform/context.js';
import { registryFrom } from '../../../src/platform/registry/loadRegistry.js';
import { openStore, type Store } from '../../../src/platform/store/index.js';
import { manualClock, newOrderPayment, transitionTo } from '../../store/fixtures.js';
import { openPlatformDatabase, type PlatformDatabase, type TestBackend } from '../../support/databases.js';

/** `raw`: answers `status` with exactly these bytes as the body, whatever they are. */
export type MiniappBehaviour = 'answer' | 'fail' | 'hang' | { slowMs: number } | { status: number; raw: string };

export interface Arrival {
  appId: string;
  eventId: string;
  attempt: number;
  /** How many attempts of this miniapp were open when this one arrived (itself included). */
  openAtArrival: number;
}

const HOSTAPP_ID = 'ha_superapp';

export class DeliveryRig {
  readonly clock = manualClock();
  readonly behaviours = new Map<string, MiniappBehaviour>();
  readonly arrivals: Arrival[] = [];
  /** Most attempts each miniapp had open at once. */
  readonly maxOpen = new Map<string, number>();
  private readonly open = new Map<string, number>();
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;
  store!: Store;
  worker!: DeliveryWorker;
  platform!: PlatformContext;
  private database: PlatformDatabase | undefined;

  constructor(
    readonly appIds: readonly string[],
    private readonly worker_: { pollMs: number; batchSize: number; leaseMs: number } = { pollMs: 60_000, batchSize: 50, leaseMs: 60_000 },
  ) {}

  /** Starts on a throw-away database of its own on `backend` (in-memory PGlite by default). */
  async start(options: { random?: () => number; backend?: TestBackend['name'] } = {}): Promise<this> {
    this.database = await openPlatformDatabase(options.backend);
    this.server = createServer((req, res) => this.handle(req, res));
    // Idle keep-alive sockets stay open for the whole test: a server closing one just as the
    // worker reuses it would fail that attempt before it arrives (a race of any HTTP client,
    // covered by retries in production, but noise in a test counting arrivals).
    this.server.keepAliveTimeout = 600_000;
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const { databaseUrl, dataDir, databaseTimeouts } = this.database.config;
    this.store = await openStore({ databaseUrl, pgliteDataDir: dataDir, timeouts: databaseTimeouts }, { clock: this.clock.now });
    const features = { payments: true, event_bridge: false, event_receiver: false };
    const registry = registryFrom({
      hostapps: [
        {
          client_id: HOSTAPP_ID,
          secret_key: 'rig-hostapp-secret',
          token_prefix: 'Token',
          use_access_token: false,
          payment_status_method: 'POST',
          features,
          urls: { create_order_payment: `${url}/hostapp/create-order-payment`, get_payment_status: `${url}/hostapp/get-payment-status` },
        },
      ],
      miniapps: this.appIds.map((app_id) => ({
        app_id,
        secret_key: `rig-${app_id}-secret`,
        hostapps: [HOSTAPP_ID],
        features,
        urls: { complete_order: `${url}/${app_id}/complete-order` },
      })),
    });
    const config = { worker: { ...this.worker_, enabled: false }, reconciler: { pollMs: 60_000, batchSize: 50, enabled: false } } as Config;
    this.platform = {
      config,
      store: this.store,
      registry,
      rateLimiters: createRateLimiters({ ...contractRateLimits(), reconciliation: reconcileBudget() }),
      metrics: createMetrics({ pendingDeliveries: () => this.store.outbox.countPending(), stuckPayments: async () => 0 }),
      log: pino({ level: 'silent' }),
      wakeWorker: () => this.worker.wake(),
      accepting: true,
      handling: new Set(),
    };
    this.worker = new DeliveryWorker(this.platform, { clock: this.clock.now, random: options.random });
    return this;
  }

  /** Queues one E6 delivery for `appId`, due now; returns its delivery_id. */
  async enqueue(appId: string): Promise<string> {
    const payment = newOrderPayment({ app_id: appId, client_id: HOSTAPP_ID });
    await this.store.orderPayments.create(payment, null);
    const result = await this.store.orderPayments.transition(transitionTo(payment, 'paid'), orderCompletionBody);
    if (result.outcome !== 'applied') throw new Error('transition not applied');
    return result.delivery.delivery_id;
  }

  /** Answers every hanging attempt with a failure, so they end now. */
  releaseHanging(): void {
    for (const res of this.hanging) answer(res, 503, { error_code: 'UNAVAILABLE' });
    this.hanging.clear();
  }

  /** Attempts of `appId` open at the server right now. */
  openNow(appId: string): number {
    return this.open.get(appId) ?? 0;
  }

  async stop(): Promise<void> {
    this.releaseHanging();
    await this.worker?.stop();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    await this.store?.close();
    await this.database?.dispose();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const appId = req.url?.split('/')[1] ?? '';
    const open = (this.open.get(appId) ?? 0) + 1;
    this.open.set(appId, open);
    this.maxOpen.set(appId, Math.max(this.maxOpen.get(appId) ?? 0, open));
    res.once('close', () => this.open.set(appId, (this.open.get(appId) ?? 1) - 1));
    this.arrivals.push({
      appId,
      eventId: String(req.headers['x-minibridge-event-id']),
      attempt: Number(req.headers['x-minibridge-delivery-attempt']),
      openAtArrival: open,
    });
    req.resume();
    req.once('end', () => {
      const behaviour = this.behaviours.get(appId) ?? 'answer';
      if (behaviour === 'answer') answer(res, 200, { code: 'SUCCESS' });
      else if (behaviour === 'fail') answer(res, 500, { error_code: 'BROKEN' });
      else if (behaviour === 'hang') this.hanging.add(res);
      else if ('raw' in behaviour) res.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(behaviour.raw);
      else setTimeout(() => answer(res, 200, { code: 'SUCCESS' }), behaviour.slowMs);
    });
  }
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Polls `condition` every 10 ms until it holds; fails after `timeoutMs` naming `what`. */
export async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
