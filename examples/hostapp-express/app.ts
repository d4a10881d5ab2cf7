import express, { type Express } from 'express';
import { createHostappRouter } from '../../src/shipped/partner-kit/index.js';
import { reportOutcome, type Outcome } from './completeOrder.js';
import { Payments } from './payments.js';

export interface HostappSettings {
  /** hostapp_client_id and hostapp_secret_key, as the dashboard issued them. */
  clientId: string;
  secretKey: string;
  /** The Authorization prefix registered in the dashboard (`Token` unless you changed it). */
  tokenPrefix?: string;
  /** Request-signing secrets, when you enabled signing in the dashboard (two while rotating). */
  signingSecrets?: string[];
  /** The platform's base URL, for reporting outcomes (E5); without it the outcome route is off. */
  platformUrl?: string;
}

/**
 * A host app server: E3 creates a payment, E4 reports its status, E7 receives miniapp events.
 * The router checks Authorization (and signatures), validates every request against the
 * contract, keeps decimals exact and always answers HTTP 200 with JSON; the handlers only do
 * the business part.
 */
export function createHostappApp(settings: HostappSettings, payments = new Payments()): Express {
  const app = express();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Stands in for your payment system settling a payment: the user paid, cancelled, or it failed.
  app.post('/simulate/:orderPaymentId/:outcome', async (req, res) => {
    const payment = payments.find(req.params.orderPaymentId);
    const outcome = req.params.outcome as Outcome;
    if (!settings.platformUrl || !payment || !['paid', 'cancelled', 'failed'].includes(outcome)) {
      res.status(404).json({ error: 'unknown payment or outcome, or no platformUrl' });
      return;
    }
    try {
      res.json(
        await reportOutcome(settings.platformUrl, settings, payment, outcome, outcome === 'failed' ? 'Declined by the issuer' : undefined),
      );
    } catch (error) {
      res.status(502).json({ error: (error as Error).message });
    }
  });
  app.use(
    createHostappRouter({
      clientId: settings.clientId,
      secretKey: settings.secretKey,
      tokenPrefix: settings.tokenPrefix,
      signingSecrets: settings.signingSecrets,
      handlers: {
        createOrderPayment(body, ctx) {
          const payment = payments.create(body, ctx.userId);
          return { order_payment_id: payment.orderPaymentId };
        },
        getPaymentStatus(query) {
          const payment = payments.find(query.order_payment_id);
          // Only the miniapp that created a payment may ask about it.
          if (!payment || payment.appId !== query.app_id || query.client_id !== settings.clientId) return { error_code: 'ORDER_NOT_FOUND' };
          return {
            app_id: payment.appId,
            client_id: settings.clientId,
            order_payment_id: payment.orderPaymentId,
            payment_status: payment.status,
          };
        },
        receiveEvent(event) {
          if (event.event_type === 'order_status_update') {
            const payload = event.payload as { order_payment_id: string; fulfillment_status: string };
            const payment = payments.find(payload.order_payment_id);
            if (payment) payment.fulfillment = payload.fulfillment_status;
          }
          // The answer goes back to the miniapp as it is; repeats of an event id get it again.
          return { received: true };
        },
      },
    }),
  );
  return app;
}
