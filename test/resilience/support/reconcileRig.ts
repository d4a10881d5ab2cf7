/**
 * The reconciler on its own, driven tick by tick (ADR 0039): a store and the reconciler share a
 * clock the test moves by hand, and one HTTP server plays host apps whose E4 answers the test
 * scripts per payment (a report, an error code, a failure, silence until released, a report about
 * another payment). The server counts the E4 requests each host app has open at once.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { components } from '../../../generated/types/hostapp.js';
import type { Config } from '../../../src/platform/config.js';
import type { PlatformContext } from '../../../src/platform/context.js';
import { createRateLimiters, contractRateLimits } from '../../../src/platform/limits/rateLimiter.js';
import { createMetrics } from '../../../src/platform/observability/metrics.js';
import { reconcileBudget } from '../../../src/platform/payments/lifecycle.js';
import { Reconciler } from '../../../src/platform/payments/reconciler.js';
import { registryFrom } from '../../../src/platform/registry/loadRegistry.js';
import { openStore, type NewOrderPayment, type Store } from '../../../src/platform/store/index.js';
import { manualClock, newOrderPayment } from '../../store/fixtures.js';
import { openPlatformDatabase, type PlatformDatabase, type TestBackend } from '../../support/databases.js';

type PaymentStatus = components['schemas']['PaymentStatus'];

/** How a host app answers E4 for one payment. */
export type E4Behaviour =
  | { kind: 'status'; payment_status: PaymentStatus; payment_fail_reason?: string }
  | { kind: 'error'; error_code: string }
  | { kind: 'http'; status: number }
  | { kind: 'hang' }
  /** A report about another payment than the one asked about. */
  | { kind: 'other' }
  | { kind: 'notJson' };

export interface E4Request {
  clientId: string;
  orderPaymentId: string;
  at: Date;
}

export const RIG_HOSTAPPS = ['ha_one', 'ha_two'] as const;
export const RIG_MINIAPP = 'ma_rig';
/** The rig's host apps ask after this many seconds (the contract's minimum) and give payments a day. */
export const RIG_RECONCILE_AFTER_SECONDS = 10;
export const RIG_LIFETIME_SECONDS = 86_400;

export class ReconcileRig {
  readonly clock = manualClock();
  readonly behaviours = new Map<string, E4Behaviour>();
  defaultBehaviour: E4Behaviour = { kind: 'status', payment_status: 'in_process' };
  readonly requests: E4Request[] = [];
  /** Most E4 requests each host app had open at once. */
  readonly maxOpen = new Map<string, number>();
  private readonly open = new Map<string, number>();
  private readonly hanging = new Map<string, Array<{ res: ServerResponse; clientId: string }>>();
  private server!: Server;
  store!: Store;
  reconciler!: Reconciler;
  platform!: PlatformContext;
  private database: PlatformDatabase | undefined;

  /** Starts on a throw-away database of its own on `backend` (in-memory PGlite by default). */
  async start(options: { random?: () => number; backend?: TestBackend['name'] } = {}): Promise<this> {
    this.database = await openPlatformDatabase(options.backend);
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 600_000;
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const { databaseUrl, dataDir, databaseTimeouts } = this.database.config;
    this.store = await openStore({ databaseUrl, pgliteDataDir: dataDir, timeouts: databaseTimeouts }, { clock: this.clock.now });
    const features = { payments: true, event_bridge: false, event_receiver: false };
    const registry = registryFrom({
      hostapps: RIG_HOSTAPPS.map((client_id) => ({
        client_id,
        secret_key: `rig-${client_id}-secret`,
        token_prefix: 'Token',
        use_access_token: false,
        payment_status_method: 'POST' as const,
        features,
        payment_lifetime_seconds: RIG_LIFETIME_SECONDS,
        reconcile_after_seconds: RIG_RECONCILE_AFTER_SECONDS,
        urls: {
          create_order_payment: `${url}/${client_id}/create-order-payment`,
          get_payment_status: `${url}/${client_id}/get-payment-status`,
        },
      })),
      miniapps: [
        {
          app_id: RIG_MINIAPP,
          secret_key: 'rig-miniapp-secret',
          hostapps: [...RIG_HOSTAPPS],
          features,
          urls: { complete_order: `${url}/miniapp` },
        },
      ],
    });
    const config = {
      worker: { pollMs: 60_000, batchSize: 50, leaseMs: 60_000, enabled: false },
      reconciler: { pollMs: 60_000, batchSize: 100, enabled: false },
    } as Config;
    // Budgets counted on the rig's clock, so a second of the test is a second of the budget.
    const now = () => this.clock.now().getTime();
    this.platform = {
      config,
      store: this.store,
      registry,
      rateLimiters: createRateLimiters({ ...contractRateLimits(), reconciliation: reconcileBudget() }, now),
      metrics: createMetrics({
        pendingDeliveries: () => this.store.outbox.countPending(),
        stuckPayments: () => this.store.reconciliation.countStuck(),
      }),
      log: pino({ level: 'silent' }),
      wakeWorker: () => undefined,
      accepting: true,
      handling: new Set(),
    };
    this.reconciler = new Reconciler(this.platform, { clock: this.clock.now, random: options.random ?? (() => 0.5) });
    return this;
  }

  /** Records `count` payments of `clientId`, created now, as E1 would (expiry and first ask from the host app's settings). */
  async create(count: number, clientId: string = RIG_HOSTAPPS[0], lifetimeSeconds = RIG_LIFETIME_SECONDS): Promise<NewOrderPayment[]> {
    const payments: NewOrderPayment[] = [];
    for (let index = 0; index < count; index++) {
      const now = this.clock.now().getTime();
      const expiresAt = new Date(now + lifetimeSeconds * 1000);
      const payment = newOrderPayment({
        app_id: RIG_MINIAPP,
        client_id: clientId,
        expires_at: expiresAt,
        reconcile_at: new Date(Math.min(now + RIG_RECONCILE_AFTER_SECONDS * 1000, expiresAt.getTime() + 60_000)),
      });
      const created = await this.store.orderPayments.create(payment, null);
      if (created.outcome !== 'created') throw new Error(`not created: ${created.outcome}`);
      payments.push(payment);
    }
    return payments;
  }

  /** One round: claims what is due and waits until every ask it started is recorded. */
  async round(): Promise<number> {
    const claimed = await this.reconciler.tick();
    await this.reconciler.settled();
    return claimed.length;
  }

  /** E4 requests made for one payment. */
  asksOf(orderPaymentId: string): E4Request[] {
    return this.requests.filter((request) => request.orderPaymentId === orderPaymentId);
  }

  /** Answers every hanging E4 of `orderPaymentId` (or all) with `behaviour`. */
  release(behaviour: E4Behaviour, orderPaymentId?: string): void {
    for (const [id, responses] of this.hanging) {
      if (orderPaymentId !== undefined && id !== orderPaymentId) continue;
      for (const { res, clientId } of responses) this.answer(res, id, behaviour, clientId);
      this.hanging.delete(id);
    }
  }

  openNow(clientId: string): number {
    return this.open.get(clientId) ?? 0;
  }

  async stop(): Promise<void> {
    this.release({ kind: 'http', status: 503 });
    await this.reconciler?.stop();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    await this.store?.close();
    await this.database?.dispose();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const clientId = req.url?.split('/')[1] ?? '';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { order_payment_id?: string };
      const id = body.order_payment_id ?? '';
      this.requests.push({ clientId, orderPaymentId: id, at: this.clock.now() });
      const open = (this.open.get(clientId) ?? 0) + 1;
      this.open.set(clientId, open);
      this.maxOpen.set(clientId, Math.max(this.maxOpen.get(clientId) ?? 0, open));
      res.once('close', () => this.open.set(clientId, (this.open.get(clientId) ?? 1) - 1));
      const behaviour = this.behaviours.get(id) ?? this.defaultBehaviour;
      if (behaviour.kind === 'hang') this.hanging.set(id, [...(this.hanging.get(id) ?? []), { res, clientId }]);
      else this.answer(res, id, behaviour, clientId);
    });
  }

  private answer(res: ServerResponse, orderPaymentId: string, behaviour: E4Behaviour, clientId: string): void {
    if (res.writableEnded || res.destroyed) return;
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    const report = { order_payment_id: orderPaymentId, app_id: RIG_MINIAPP, client_id: clientId };
    switch (behaviour.kind) {
      case 'status':
        return void json(200, {
          ...report,
          payment_status: behaviour.payment_status,
          ...(behaviour.payment_fail_reason && { payment_fail_reason: behaviour.payment_fail_reason }),
        });
      case 'error':
        return void json(200, { error_code: behaviour.error_code });
      case 'http':
        return void json(behaviour.status, { error: 'down' });
      case 'other':
        return void json(200, { ...report, order_payment_id: `${orderPaymentId}-other`, payment_status: 'paid' });
      case 'notJson':
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>');
      case 'hang':
        return;
    }
  }
}
