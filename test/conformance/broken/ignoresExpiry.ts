import express from 'express';
import { HOSTAPP, referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E4 keeps reporting a payment in_process after its expires_at passed unpaid: the platform would list it as stuck. */
export function ignoresExpiry(): BrokenServer {
  const created = new Map<string, string>();
  let next = 0;
  const byMiniappOrder = new Map<string, string>();
  const app = express().use(
    referenceHostappRouter({
      handlers: {
        createOrderPayment(body) {
          const key = body.order.miniapp_order_id === undefined ? undefined : `${body.app_id}/${body.order.miniapp_order_id}`;
          const known = key === undefined ? undefined : byMiniappOrder.get(key);
          if (known) return { order_payment_id: known };
          const id = `hop_never_expires_${++next}`;
          created.set(id, body.app_id);
          if (key !== undefined) byMiniappOrder.set(key, id);
          return { order_payment_id: id };
        },
        getPaymentStatus: (query) =>
          created.get(query.order_payment_id) === query.app_id && query.client_id === HOSTAPP.id
            ? { app_id: query.app_id, client_id: query.client_id, order_payment_id: query.order_payment_id, payment_status: 'in_process' }
            : { error_code: 'ORDER_NOT_FOUND' },
        receiveEvent: () => ({ received: true }),
      },
    }),
  );
  return { name: 'keeps an expired payment in_process', subject: 'hostapp', app, catches: ['expiry getHostappPaymentStatus'] };
}
