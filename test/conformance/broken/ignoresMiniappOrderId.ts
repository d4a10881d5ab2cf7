import express from 'express';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E3 creates a new payment for every call, even for a miniapp_order_id it has seen (a retried E1 pays twice). */
export function ignoresMiniappOrderId(): BrokenServer {
  let next = 0;
  /** Each payment created, with its expiry (closed once it has passed, as the reference does). */
  const created = new Map<string, string | undefined>();
  const app = express().use(
    referenceHostappRouter({
      handlers: {
        createOrderPayment(body) {
          const id = `hop_every_call_${++next}`;
          created.set(id, body.expires_at);
          return { order_payment_id: id };
        },
        getPaymentStatus: (query) => {
          if (!created.has(query.order_payment_id)) return { error_code: 'ORDER_NOT_FOUND' };
          const expiresAt = created.get(query.order_payment_id);
          const expired = expiresAt !== undefined && Date.parse(expiresAt) <= Date.now();
          return {
            app_id: query.app_id,
            client_id: query.client_id,
            order_payment_id: query.order_payment_id,
            payment_status: expired ? 'cancelled' : 'in_process',
          };
        },
        receiveEvent: () => ({ received: true }),
      },
    }),
  );
  return { name: 'ignores miniapp_order_id on E3', subject: 'hostapp', app, catches: ['idempotency createHostappOrderPayment'] };
}
