import { randomUUID } from 'node:crypto';
import type { NewOrderPayment, OrderPaymentRef, TransitionRequest } from '../../src/platform/store/index.js';

/** A clock tests move by hand. */
export function manualClock(start = new Date('2026-01-15T10:00:00.000Z')) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}

export const seconds = (n: number) => n * 1000;
export const hours = (n: number) => n * 60 * 60 * 1000;

export function newOrderPayment(overrides: Partial<NewOrderPayment> = {}): NewOrderPayment {
  const miniappOrderId = overrides.miniapp_order_id ?? `mo_${randomUUID()}`;
  return {
    order_payment_id: `hop_${randomUUID()}`,
    app_id: 'ma_shop',
    client_id: 'ha_superapp',
    miniapp_order_id: miniappOrderId,
    hostapp_user_id: 'user_42',
    amount: '12.30',
    currency: 'VND',
    order_json: `{"currency":"VND","amount":"12.30","miniapp_order_id":${JSON.stringify(miniappOrderId)}}`,
    custom_attributes: null,
    // Far ahead: a payment is asked about (reconciliation) only in tests that say when.
    expires_at: new Date('2099-01-01T00:00:00.000Z'),
    reconcile_at: new Date('2099-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

export function refOf(payment: NewOrderPayment): OrderPaymentRef {
  return { order_payment_id: payment.order_payment_id, app_id: payment.app_id, client_id: payment.client_id };
}

export function transitionTo(
  payment: NewOrderPayment,
  payment_status: TransitionRequest['payment_status'],
  extra: Partial<TransitionRequest> = {},
): TransitionRequest {
  return {
    ...refOf(payment),
    payment_status,
    payment_fail_reason: null,
    custom_attributes: null,
    source: 'E5',
    ...extra,
  };
}
