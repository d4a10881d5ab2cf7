import { decimalText, type HostappCreateOrderPaymentBody } from '../../src/shipped/partner-kit/index.js';

type PaymentStatus = 'in_process' | 'paid' | 'cancelled' | 'failed';

export interface Payment {
  orderPaymentId: string;
  appId: string;
  miniappOrderId: string | undefined;
  userId: string | undefined;
  currency: string;
  /** The amount exactly as the miniapp wrote it: money never goes through a float. */
  amount: string;
  status: PaymentStatus;
  fulfillment: string | undefined;
}

/**
 * The host app's payments, in memory for the example; a real host app keeps them in its
 * payment system. Creation is idempotent on (app_id, miniapp_order_id), as E3 requires: after a
 * time-out the miniapp may retry, and the first call may already have created the payment.
 */
export class Payments {
  private readonly byId = new Map<string, Payment>();
  private readonly byMiniappOrder = new Map<string, string>();
  private sequence = 0;

  create(body: HostappCreateOrderPaymentBody, userId: string | undefined): Payment {
    const key = body.order.miniapp_order_id === undefined ? undefined : `${body.app_id}\u0000${body.order.miniapp_order_id}`;
    const existing = key === undefined ? undefined : this.byMiniappOrder.get(key);
    if (existing) return this.byId.get(existing)!;
    const payment: Payment = {
      orderPaymentId: `hop_example_${++this.sequence}`,
      appId: body.app_id,
      miniappOrderId: body.order.miniapp_order_id,
      userId,
      currency: body.order.currency,
      amount: decimalText(body.order.amount),
      status: 'in_process',
      fulfillment: undefined,
    };
    this.byId.set(payment.orderPaymentId, payment);
    if (key !== undefined) this.byMiniappOrder.set(key, payment.orderPaymentId);
    return payment;
  }

  find(orderPaymentId: string): Payment | undefined {
    return this.byId.get(orderPaymentId);
  }
}
