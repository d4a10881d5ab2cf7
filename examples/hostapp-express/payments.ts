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
  /** When the payment expires (E3's expires_at): no payment is taken after it. */
  expiresAt: string | undefined;
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
    if (existing) {
      const payment = this.byId.get(existing)!;
      // A retry of the same order may carry a later expiry: the latest applies.
      if (body.expires_at !== undefined && (payment.expiresAt === undefined || body.expires_at > payment.expiresAt))
        payment.expiresAt = body.expires_at;
      return payment;
    }
    const payment: Payment = {
      orderPaymentId: `hop_example_${++this.sequence}`,
      appId: body.app_id,
      miniappOrderId: body.order.miniapp_order_id,
      userId,
      currency: body.order.currency,
      amount: decimalText(body.order.amount),
      status: 'in_process',
      fulfillment: undefined,
      expiresAt: body.expires_at,
    };
    this.byId.set(payment.orderPaymentId, payment);
    if (key !== undefined) this.byMiniappOrder.set(key, payment.orderPaymentId);
    return payment;
  }

  /**
   * The payment, closed first if it expired unpaid: take no payment after `expires_at`, and report
   * the payment cancelled from then on, or Minibridge would list it as stuck.
   */
  find(orderPaymentId: string, now = Date.now()): Payment | undefined {
    const payment = this.byId.get(orderPaymentId);
    if (payment?.status === 'in_process' && payment.expiresAt !== undefined && Date.parse(payment.expiresAt) <= now)
      payment.status = 'cancelled';
    return payment;
  }
}
