/**
 * The demo miniapp's server: it serves the miniapp page, creates order payments with E1 through
 * the generated platform client, answers the page's status questions (asking E2 while a payment
 * is in process) and receives E6 and E7 through the partner kit's router.
 *
 * Copy it as the starting point of a miniapp server: the miniapp's secret stays here, never in
 * the page.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import type { components } from '../../generated/types/platform.js';
import { basicAuthorization } from '../../src/wire/authorization.js';
import { createPlatformClient } from '../../src/shipped/clients/platform.js';
import { packageRoot } from '../../src/contract/documents.js';
import {
  createMiniappRouter,
  decimalText,
  parseLossless,
  type OrderCompletionBody,
  type PartnerKitLogger,
} from '../../src/shipped/partner-kit/index.js';
import { DEFAULT_CATALOGUE, type Product } from './catalogue.js';

type PaymentStatus = components['schemas']['PaymentStatus'];
type PlatformError = components['schemas']['Error'];

/** An order as the demo keeps it (in memory; use your database). */
export interface DemoOrder {
  miniapp_order_id: string;
  order_payment_id: string;
  product: Product;
  payment_status: PaymentStatus;
  payment_fail_reason?: string;
  /** Where the current status came from: E1 created it, E6 reported it, or E2 answered it. */
  status_source: 'E1' | 'E6' | 'E2';
}

/** One E6 as the demo received it. */
export interface DemoCompletion {
  event_id: string;
  body: unknown;
}

export interface DemoMiniappOptions {
  /** The platform's `{base_url}`, or a function giving it once it is known. */
  platformUrl: string | (() => string);
  /** The miniapp's app_id and secret_key, as issued in the dashboard. */
  appId: string;
  secretKey: string;
  /** The host app this miniapp runs in (client_id of E1 and E2). */
  clientId: string;
  catalogue?: readonly Product[];
  logger?: PartnerKitLogger;
}

export interface DemoMiniapp {
  app: express.Express;
  orders: Map<string, DemoOrder>;
  completions: DemoCompletion[];
  /**
   * Records an E6 that reached the miniapp elsewhere: the sandbox's miniapp server receives E6
   * and hands it on, so the demo runs inside `npm start` without a registration of its own.
   */
  recordCompletion(eventId: string, body: OrderCompletionBody): void;
}

// From the package root, so the demo also runs from the compiled dist/ (npm start's sandbox).
const publicDir = path.join(packageRoot(), 'examples', 'demo-miniapp', 'public');
const sdkFile = path.join(packageRoot(), 'generated', 'sdk', 'minibridge-sdk.js');

export function createDemoMiniapp(options: DemoMiniappOptions): DemoMiniapp {
  const catalogue = options.catalogue ?? DEFAULT_CATALOGUE;
  const orders = new Map<string, DemoOrder>();
  const completions: DemoCompletion[] = [];
  const platformUrl = typeof options.platformUrl === 'string' ? () => options.platformUrl as string : options.platformUrl;
  const platform = () =>
    createPlatformClient({ baseUrl: platformUrl(), headers: { Authorization: basicAuthorization(options.appId, options.secretKey) } });

  function recordCompletion(eventId: string, body: OrderCompletionBody): void {
    completions.push({ event_id: eventId, body });
    const order =
      orders.get(body.miniapp_order_id ?? '') ??
      [...orders.values()].find((known) => known.order_payment_id === body.hostapp_order_payment_id);
    if (order) record(order, body.payment_status, body.payment_fail_reason, 'E6');
  }

  const app = express();
  app.disable('x-powered-by');

  // E6 and E7 from the platform, authenticated, validated and idempotent on X-Minibridge-Event-Id.
  app.use(
    createMiniappRouter({
      appId: options.appId,
      secretKey: options.secretKey,
      logger: options.logger,
      handlers: {
        receiveOrderCompletion: (body, ctx) => {
          recordCompletion(ctx.eventId, body);
          // Unknown orders are acknowledged too: refusing would only make the platform retry for 72 h.
          return { code: 'SUCCESS' };
        },
        receiveEvent: (_event, ctx) => ({ received: true, event_id: ctx.eventId }),
      },
    }),
  );

  app.get('/minibridge-sdk.js', (_req, res) => res.type('text/javascript').sendFile(sdkFile));
  app.use(express.static(publicDir));
  app.use('/api', express.json());

  app.get('/api/catalogue', (_req, res) => {
    res.json({ products: catalogue });
  });

  app.post('/api/orders', async (req: Request, res: Response) => {
    const product = catalogue.find((item) => item.sku === (req.body as { sku?: unknown } | undefined)?.sku);
    if (!product) {
      res.status(400).json({ error: 'unknown product' });
      return;
    }
    const miniappOrderId = `demo-${randomBytes(6).toString('hex')}`;
    const { data, error, response } = await platform().POST('/api/v1/orders/create-order-payment/', {
      body: {
        app_id: options.appId,
        client_id: options.clientId,
        order: { currency: product.currency, amount: product.amount, miniapp_order_id: miniappOrderId },
      },
      // E1's answer carries no money; E2's neither. Read as text anyway, the habit that keeps digits.
      parseAs: 'text',
    });
    if (!response.ok || typeof data !== 'string') {
      res.status(502).json({ error: 'the platform refused the order', platform: platformError(error) });
      return;
    }
    const { order_payment_id } = parseLossless(data) as { order_payment_id: string };
    orders.set(miniappOrderId, {
      miniapp_order_id: miniappOrderId,
      order_payment_id,
      product,
      payment_status: 'in_process',
      status_source: 'E1',
    });
    res
      .status(201)
      .json({ miniapp_order_id: miniappOrderId, order_payment_id, amount: product.amount, currency: product.currency, sku: product.sku });
  });

  app.get('/api/orders/:id', async (req: Request, res: Response) => {
    const order = orders.get(String(req.params.id));
    if (!order) {
      res.status(404).json({ error: 'unknown order' });
      return;
    }
    if (order.payment_status === 'in_process' && order.product.askWithE2 !== false) {
      // Still in process here (no E6 yet): ask the platform, which asks the host app (E4).
      // Not needed for the outcome (the platform asks the host app itself after its reconcile
      // delay, and sends E6), only to show it sooner.
      const { data, response } = await platform().POST('/api/v1/orders/get-payment-status/', {
        body: { app_id: options.appId, client_id: options.clientId, order_payment_id: order.order_payment_id },
        parseAs: 'text',
      });
      if (response.ok && typeof data === 'string') {
        const report = parseLossless(data) as { payment_status: PaymentStatus; payment_fail_reason?: string };
        if (report.payment_status !== 'in_process') record(order, report.payment_status, report.payment_fail_reason, 'E2');
      }
    }
    res.json({
      ...order,
      amount: decimalText(order.product.amount),
      e6_received: completions.some(
        (completion) => (completion.body as { miniapp_order_id?: string }).miniapp_order_id === order.miniapp_order_id,
      ),
    });
  });

  return { app, orders, completions, recordCompletion };
}

/** A terminal status never changes (the platform guarantees it; the demo does not rely on order of arrival). */
function record(order: DemoOrder, status: PaymentStatus, failReason: string | undefined, source: DemoOrder['status_source']): void {
  if (order.payment_status !== 'in_process') return;
  order.payment_status = status;
  if (failReason !== undefined) order.payment_fail_reason = failReason;
  order.status_source = source;
}

function platformError(error: unknown): PlatformError | undefined {
  if (typeof error === 'string') {
    try {
      return JSON.parse(error) as PlatformError;
    } catch {
      return undefined;
    }
  }
  return error as PlatformError | undefined;
}
