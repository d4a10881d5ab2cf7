import { randomBytes } from 'node:crypto';
import type express from 'express';
import type { Request, Response } from 'express';
import type { components } from '../../../generated/types/platform.js';
import { basicAuthorization, prefixedAuthorization } from '../../wire/authorization.js';
import { canonicalJsonText, decimalText, ownValue } from '../../contract/json.js';
import { createHostappRouter, type PartnerKitLogger } from '../../shipped/partner-kit/index.js';
import { simulatorRouter } from '../simulator/index.js';
import { eventFields, recordEvents, type ReceivedEvent } from './events.js';
import { controlRouter, jsonBodyOf, partnerApp, relayToPlatform, SandboxRequestError, sendJson } from './http.js';
import { confirmationFor, refusalFor, type Confirmation } from './magicAmounts.js';
import { completeOrder, sendHostappEvent, type PlatformAnswer, type PlatformCaller } from './platformCalls.js';

type PaymentStatus = components['schemas']['PaymentStatus'];

/** A payment as the simulated host app keeps it (shown by GET /sandbox/payments). */
export interface SandboxPayment {
  order_payment_id: string;
  app_id: string;
  client_id: string;
  miniapp_order_id?: string;
  hostapp_user_id?: string;
  /** The amount's exact text, as the miniapp sent it. */
  amount: string;
  currency: string;
  /** The order exactly as E3 carried it. */
  order: unknown;
  payment_status: PaymentStatus;
  payment_fail_reason?: string;
  /** When the payment expires (E3's expires_at): no payment is taken after it (ADR 0039). */
  expires_at?: string;
  /** Whether the user acted on the payment sheet (confirmed, cancelled or failed it). */
  acted: boolean;
  created_at: string;
  updated_at: string;
  /** The last E5 this payment caused: the platform's answer, or why it could not be sent. */
  complete_order?: { attempts: number; answer?: PlatformAnswer; error?: string };
}

export type PaymentAction = 'confirm' | 'cancel' | 'fail';

export interface SandboxHostappOptions {
  clientId: string;
  secretKey: string;
  tokenPrefix: string;
  signingSecrets: readonly string[];
  /** The sandbox miniapp, the default recipient of /sandbox/send-event. */
  miniappId: string;
  /** The platform's address, resolved at each call. */
  platformUrl: () => string;
  /** Confirm each new payment by itself after this many milliseconds. */
  autoConfirmMs?: number;
  /** The miniapp page the browser simulator opens when given none (the sandbox's demo miniapp). */
  defaultMiniappUrl?: () => string | undefined;
  /** The order_payment_id a new order gets instead of a random one, when it has one (the samples' order, ADR 0043). */
  pinnedOrderPaymentId?: (appId: string, miniappOrderId: string | undefined) => string | undefined;
  logger: PartnerKitLogger;
}

export interface SandboxHostapp {
  app: express.Express;
  payments: Map<string, SandboxPayment>;
  events: ReceivedEvent[];
  /** What POST /sandbox/payments/{id}/{action} does. */
  act(orderPaymentId: string, action: PaymentAction, failReason?: string): Promise<SandboxPayment>;
  /** Stops the auto-confirm timers. */
  close(): void;
}

/** E5 retries: the platform may not have stored a payment yet when an immediate auto-confirm fires. */
const COMPLETE_ORDER_ATTEMPTS = 5;
const COMPLETE_ORDER_FIRST_DELAY_MS = 200;

/**
 * A host app server built with the partner kit: E3 creates payments in memory, E4 reports them,
 * E7 records events. Payments reach their outcome when told (`/sandbox/payments/{id}/confirm`,
 * `/cancel`, `/fail`) or after `autoConfirmMs`; confirming follows the magic amounts.
 */
export function createSandboxHostapp(options: SandboxHostappOptions): SandboxHostapp {
  const payments = new Map<string, SandboxPayment>();
  const byMiniappOrder = new Map<string, string>();
  const events: ReceivedEvent[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const { platformUrl, signingSecrets } = options;
  // E5 authenticates like every platform payment operation (Basic); E8 with the host app's token prefix.
  const paymentCaller: PlatformCaller = {
    platformUrl,
    signingSecrets,
    authorization: basicAuthorization(options.clientId, options.secretKey),
  };
  const eventCaller: PlatformCaller = {
    platformUrl,
    signingSecrets,
    authorization: prefixedAuthorization(options.tokenPrefix, options.clientId, options.secretKey),
  };

  const act = async (orderPaymentId: string, action: PaymentAction, failReason?: string): Promise<SandboxPayment> => {
    const payment = payments.get(orderPaymentId);
    if (!payment) throw new SandboxRequestError(`no sandbox payment ${orderPaymentId}`, 404, 'ORDER_NOT_FOUND');
    const outcome: Confirmation =
      action === 'confirm'
        ? confirmationFor(payment.amount)
        : action === 'cancel'
          ? { status: 'cancelled', callsCompleteOrder: true }
          : { status: 'failed', failReason: failReason ?? 'Declined in the sandbox', callsCompleteOrder: true };
    closeIfExpired(payment);
    if (payment.payment_status !== 'in_process' && payment.payment_status !== outcome.status) {
      throw new SandboxRequestError(`payment ${orderPaymentId} is already ${payment.payment_status}`, 409, 'PAYMENT_STATUS_CONFLICT');
    }
    payment.acted = true;
    if (payment.payment_status === 'in_process') {
      payment.payment_status = outcome.status;
      if (outcome.failReason !== undefined) payment.payment_fail_reason = outcome.failReason;
      payment.updated_at = new Date().toISOString();
    }
    if (outcome.callsCompleteOrder) payment.complete_order = await reportOutcome(payment);
    return payment;
  };

  /**
   * A host app takes no payment after its expiry (ADR 0039): one the user never acted on is
   * closed (cancelled) once it has expired, as a host app should, so E4 reports it and the
   * platform's reconciliation settles it.
   */
  const closeIfExpired = (payment: SandboxPayment) => {
    if (payment.payment_status !== 'in_process' || payment.acted || payment.expires_at === undefined) return;
    if (Date.parse(payment.expires_at) > Date.now()) return;
    payment.payment_status = 'cancelled';
    payment.updated_at = new Date().toISOString();
  };

  const reportOutcome = async (payment: SandboxPayment): Promise<NonNullable<SandboxPayment['complete_order']>> => {
    const body = {
      order_payment_id: payment.order_payment_id,
      app_id: payment.app_id,
      client_id: payment.client_id,
      payment_status: payment.payment_status,
      ...(payment.payment_fail_reason !== undefined && { payment_fail_reason: payment.payment_fail_reason }),
      custom_attributes: { sandbox_transaction_ref: `sbx_${payment.order_payment_id}` },
    };
    let last: NonNullable<SandboxPayment['complete_order']> = { attempts: 0 };
    for (let attempt = 1; attempt <= COMPLETE_ORDER_ATTEMPTS; attempt++) {
      try {
        const answer = await completeOrder(paymentCaller, body);
        last = { attempts: attempt, answer };
        if (!worthRetrying(answer)) return last;
      } catch (error) {
        last = { attempts: attempt, error: String((error as Error)?.message ?? error) };
      }
      if (attempt < COMPLETE_ORDER_ATTEMPTS) await delay(COMPLETE_ORDER_FIRST_DELAY_MS * 2 ** (attempt - 1));
    }
    options.logger.warn({ order_payment_id: payment.order_payment_id, last }, 'sandbox host app: E5 did not succeed');
    return last;
  };

  const scheduleAutoConfirm = (orderPaymentId: string) => {
    if (options.autoConfirmMs === undefined) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      act(orderPaymentId, 'confirm').catch((error) =>
        options.logger.error({ err: error, orderPaymentId }, 'sandbox host app: auto-confirm failed'),
      );
    }, options.autoConfirmMs);
    timers.add(timer);
  };

  const router = createHostappRouter({
    clientId: options.clientId,
    secretKey: options.secretKey,
    tokenPrefix: options.tokenPrefix,
    signingSecrets: options.signingSecrets.length > 0 ? options.signingSecrets : undefined,
    logger: options.logger,
    handlers: {
      createOrderPayment: ({ app_id, order, expires_at }) => {
        const amount = decimalText(order.amount);
        const refusal = refusalFor(amount);
        if (refusal) return { error_code: refusal };
        // E3 is idempotent on miniapp_order_id, as the contract asks of host apps.
        const orderKey = order.miniapp_order_id === undefined ? undefined : `${app_id}\n${order.miniapp_order_id}`;
        const known = orderKey === undefined ? undefined : byMiniappOrder.get(orderKey);
        if (known) {
          const payment = payments.get(known);
          // The same order reference with another order: refused, the first payment kept, never
          // its id for an order it was not made for (guide 01, "E3 with ... another body").
          if (payment && canonicalJsonText(payment.order) !== canonicalJsonText(order)) return { error_code: 'INVALID_ORDER_DATA' };
          // A retry of the same order may carry a later expiry: the latest applies (ADR 0039).
          if (payment && expires_at !== undefined && (payment.expires_at === undefined || expires_at > payment.expires_at))
            payment.expires_at = expires_at;
          return { order_payment_id: known };
        }
        const now = new Date().toISOString();
        const pinned = options.pinnedOrderPaymentId?.(app_id, order.miniapp_order_id);
        const payment: SandboxPayment = {
          order_payment_id: pinned !== undefined && !payments.has(pinned) ? pinned : newOrderPaymentId(),
          app_id,
          client_id: options.clientId,
          ...(order.miniapp_order_id !== undefined && { miniapp_order_id: order.miniapp_order_id }),
          ...(order.hostapp_user_id !== undefined && { hostapp_user_id: order.hostapp_user_id }),
          amount,
          currency: order.currency,
          order,
          payment_status: 'in_process',
          ...(expires_at !== undefined && { expires_at }),
          acted: false,
          created_at: now,
          updated_at: now,
        };
        payments.set(payment.order_payment_id, payment);
        if (orderKey !== undefined) byMiniappOrder.set(orderKey, payment.order_payment_id);
        scheduleAutoConfirm(payment.order_payment_id);
        return { order_payment_id: payment.order_payment_id };
      },
      getPaymentStatus: ({ app_id, client_id, order_payment_id }) => {
        const payment = payments.get(order_payment_id);
        if (!payment || payment.app_id !== app_id || payment.client_id !== client_id) return { error_code: 'ORDER_NOT_FOUND' };
        closeIfExpired(payment);
        return {
          app_id,
          client_id,
          order_payment_id,
          payment_status: payment.payment_status,
          ...(payment.payment_fail_reason !== undefined && { payment_fail_reason: payment.payment_fail_reason }),
        };
      },
      receiveEvent: recordEvents(events),
    },
  });

  const control = controlRouter();
  control.get('/payments', (_req, res) => sendJson(res, 200, { payments: [...payments.values()] }));
  control.get('/payments/:id', (req, res) => {
    const payment = payments.get(String(req.params.id));
    if (!payment) throw new SandboxRequestError(`no sandbox payment ${req.params.id}`, 404, 'ORDER_NOT_FOUND');
    sendJson(res, 200, payment);
  });
  control.post('/payments/:id/:action', async (req: Request, res: Response) => {
    const action = String(req.params.action);
    if (action !== 'confirm' && action !== 'cancel' && action !== 'fail') {
      throw new SandboxRequestError(`unknown action ${action}; use confirm, cancel or fail`, 404, 'NOT_FOUND');
    }
    const reason = jsonBodyOf(req).payment_fail_reason;
    if (reason !== undefined && typeof reason !== 'string') throw new SandboxRequestError('payment_fail_reason must be a string');
    sendJson(res, 200, await act(String(req.params.id), action, reason));
  });
  control.get('/events', (_req, res) => sendJson(res, 200, { events }));
  control.post(
    '/send-event',
    relayToPlatform((body) =>
      sendHostappEvent(eventCaller, {
        app_id: (body.app_id as string | undefined) ?? options.miniappId,
        client_id: options.clientId,
        ...eventFields(body),
      }),
    ),
  );

  const app = partnerApp(router, control);
  app.use('/simulator', simulatorRouter({ defaultMiniappUrl: options.defaultMiniappUrl }));
  return {
    app,
    payments,
    events,
    act,
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** E5 answers worth sending again: the platform busy or down, or the payment not stored yet. */
function worthRetrying(answer: PlatformAnswer): boolean {
  if (answer.status === 429 || answer.status >= 500) return true;
  const code = ownValue(answer.body, 'error_code');
  return code === 'ORDER_NOT_FOUND' || code === 'UNKNOWN_ERROR';
}

function newOrderPaymentId(): string {
  // Random, so a restarted sandbox never reuses an id the platform's database still holds.
  return `hop_sbx_${randomBytes(8).toString('hex')}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
