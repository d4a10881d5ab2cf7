import type { AddressInfo } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import {
  createHostappRouter,
  createMiniappRouter,
  type HostappRouterOptions,
  type MiniappRouterOptions,
} from '../../src/shipped/partner-kit/index.js';

/** Credentials the reference servers and the tests share (never used outside tests). */
export const HOSTAPP = { id: 'ha_reference', secret: 'reference-hostapp-secret' };
export const MINIAPP = { id: 'ma_reference', secret: 'reference-miniapp-secret' };

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

const silent = { warn() {}, error() {} };

/** A correct host app server: E3 idempotent on miniapp_order_id, E4 for the orders it created, E7 acknowledged. */
export function referenceHostappRouter(overrides: Partial<HostappRouterOptions> = {}) {
  return createHostappRouter({
    clientId: HOSTAPP.id,
    secretKey: HOSTAPP.secret,
    logger: silent,
    handlers: referenceHostappHandlers(),
    ...overrides,
  });
}

/** The reference host app's handlers, each call with its own orders. */
export function referenceHostappHandlers(): HostappRouterOptions['handlers'] {
  const orders = new Map<string, { app_id: string; order_payment_id: string; expires_at?: string }>();
  const byMiniappOrder = new Map<string, string>();
  let next = 0;
  return {
    createOrderPayment(body) {
      const known = body.order.miniapp_order_id && byMiniappOrder.get(`${body.app_id}/${body.order.miniapp_order_id}`);
      if (known) return { order_payment_id: known };
      const id = `hop_ref_${++next}`;
      orders.set(id, {
        app_id: body.app_id,
        order_payment_id: id,
        ...(body.expires_at !== undefined && { expires_at: body.expires_at }),
      });
      if (body.order.miniapp_order_id) byMiniappOrder.set(`${body.app_id}/${body.order.miniapp_order_id}`, id);
      return { order_payment_id: id };
    },
    getPaymentStatus(query) {
      const order = orders.get(query.order_payment_id);
      if (!order || order.app_id !== query.app_id || query.client_id !== HOSTAPP.id) return { error_code: 'ORDER_NOT_FOUND' };
      // Never paid here: closed once it has expired (ADR 0039).
      const expired = order.expires_at !== undefined && Date.parse(order.expires_at) <= Date.now();
      return {
        app_id: order.app_id,
        client_id: HOSTAPP.id,
        order_payment_id: order.order_payment_id,
        payment_status: expired ? 'cancelled' : 'in_process',
      };
    },
    receiveEvent: () => ({ received: true }),
  };
}

/** A correct miniapp server: E6 and E7 acknowledged, idempotent on X-Minibridge-Event-Id (the helpers' default). */
export function referenceMiniappRouter(overrides: Partial<MiniappRouterOptions> = {}) {
  return createMiniappRouter({
    appId: MINIAPP.id,
    secretKey: MINIAPP.secret,
    logger: silent,
    handlers: {
      receiveOrderCompletion: () => ({ code: 'SUCCESS' }),
      receiveEvent: () => ({ received: true }),
    },
    ...overrides,
  });
}

/** Serves an app on a free local port. */
export async function serve(app: Express | RequestHandler): Promise<RunningServer> {
  const server = (typeof app === 'function' && 'listen' in app ? app : express().use(app)).listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
