import express from 'express';
import { HOSTAPP, referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E3 answers the same order_payment_id for every order, whatever its miniapp_order_id. */
export function reusesOrderPaymentId(): BrokenServer {
  const id = 'hop_the_only_one';
  // Its one payment expires when the latest order said (its only other fault would be the expiry check's).
  let expiresAt: string | undefined;
  const app = express().use(
    referenceHostappRouter({
      handlers: {
        createOrderPayment: (body) => {
          expiresAt = body.expires_at;
          return { order_payment_id: id };
        },
        getPaymentStatus: (query) =>
          query.order_payment_id === id && query.client_id === HOSTAPP.id
            ? {
                app_id: query.app_id,
                client_id: query.client_id,
                order_payment_id: id,
                payment_status: expiresAt !== undefined && Date.parse(expiresAt) <= Date.now() ? 'cancelled' : 'in_process',
              }
            : { error_code: 'ORDER_NOT_FOUND' },
        receiveEvent: () => ({ received: true }),
      },
    }),
  );
  return {
    name: 'answers one order_payment_id for every order',
    subject: 'hostapp',
    app,
    catches: ['idempotency createHostappOrderPayment'],
  };
}
