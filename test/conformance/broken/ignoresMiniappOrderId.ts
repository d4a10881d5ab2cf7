import express from 'express';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E3 creates a new payment for every call, even for a miniapp_order_id it has seen (a retried E1 pays twice). */
export function ignoresMiniappOrderId(): BrokenServer {
  let next = 0;
  const created = new Set<string>();
  const app = express().use(
    referenceHostappRouter({
      handlers: {
        createOrderPayment() {
          const id = `hop_every_call_${++next}`;
          created.add(id);
          return { order_payment_id: id };
        },
        getPaymentStatus: (query) =>
          created.has(query.order_payment_id)
            ? { app_id: query.app_id, client_id: query.client_id, order_payment_id: query.order_payment_id, payment_status: 'in_process' }
            : { error_code: 'ORDER_NOT_FOUND' },
        receiveEvent: () => ({ received: true }),
      },
    }),
  );
  return { name: 'ignores miniapp_order_id on E3', subject: 'hostapp', app, catches: ['idempotency createHostappOrderPayment'] };
}
