import { parseLossless, stringifyLossless } from '../../../src/contract/json.js';
import type { components } from '../../../generated/types/platform.js';
import { PARTIES, hostappBasicAuthorization, hostappTokenAuthorization, miniappAuthorization } from './registry.js';

type Schemas = components['schemas'];

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function post(baseUrl: string, path: string, authorization: string, body: unknown): Promise<Answer> {
  const response = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: stringifyLossless(body),
  });
  return { status: response.status, body: parseLossless(await response.text()) as Record<string, unknown>, headers: response.headers };
}

export function createOrderPayment(baseUrl: string, miniappOrderId: string): Promise<Answer> {
  const body: Schemas['CreateOrderPaymentRequest'] = {
    app_id: PARTIES.appId,
    client_id: PARTIES.clientId,
    order: { currency: 'VND', amount: '125000.50', miniapp_order_id: miniappOrderId, hostapp_user_id: 'u_48213' },
  };
  return post(baseUrl, '/api/v1/orders/create-order-payment/', miniappAuthorization, body);
}

export function getPaymentStatus(baseUrl: string, orderPaymentId: string): Promise<Answer> {
  const body: Schemas['GetPaymentStatusRequest'] = { app_id: PARTIES.appId, client_id: PARTIES.clientId, order_payment_id: orderPaymentId };
  return post(baseUrl, '/api/v1/orders/get-payment-status/', miniappAuthorization, body);
}

export function completeOrder(baseUrl: string, orderPaymentId: string, paymentStatus: Schemas['PaymentStatus'] = 'paid'): Promise<Answer> {
  const body: Schemas['CompleteOrderRequest'] = {
    order_payment_id: orderPaymentId,
    app_id: PARTIES.appId,
    client_id: PARTIES.clientId,
    payment_status: paymentStatus,
  };
  return post(baseUrl, '/api/v1/orders/complete-order/', hostappBasicAuthorization, body);
}

export function sendHostappEvent(baseUrl: string, externalEventId?: string): Promise<Answer> {
  const body: Schemas['HostappEventRequest'] = {
    app_id: PARTIES.appId,
    client_id: PARTIES.clientId,
    event_type: 'user_profile_updated',
    ...(externalEventId !== undefined && { external_event_id: externalEventId }),
    payload: { hostapp_user_id: 'u_48213' },
  };
  return post(baseUrl, '/api/v1/events/hostapp/', hostappTokenAuthorization, body);
}

export function sendMiniappEvent(baseUrl: string): Promise<Answer> {
  const body: Schemas['MiniappEventRequest'] = {
    app_id: PARTIES.appId,
    client_id: PARTIES.clientId,
    event_type: 'order_status_update',
    payload: { order_payment_id: 'hop_1', fulfillment_status: 'shipped' },
  };
  return post(baseUrl, '/api/v1/events/miniapp/', miniappAuthorization, body);
}

export const ADMIN_TOKEN = 'resilience-admin-token';

async function admin<T>(baseUrl: string, path: string): Promise<T> {
  const response = await fetch(baseUrl + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (response.status !== 200) throw new Error(`admin ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Every E6 delivery (admin API), newest first, all pages. */
export async function listDeliveries(baseUrl: string): Promise<Array<Schemas['Delivery']>> {
  const all: Array<Schemas['Delivery']> = [];
  let cursor: string | null = null;
  do {
    const page: Schemas['DeliveryList'] = await admin(baseUrl, `/api/v1/admin/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    all.push(...page.deliveries);
    cursor = page.next_cursor ?? null;
  } while (cursor);
  return all;
}

export async function deliveryOf(baseUrl: string, orderPaymentId: string): Promise<Schemas['DeliveryDetail'] | undefined> {
  const found = (await listDeliveries(baseUrl)).find((delivery) => delivery.order_payment_id === orderPaymentId);
  return found ? admin<Schemas['DeliveryDetail']>(baseUrl, `/api/v1/admin/deliveries/${found.delivery_id}`) : undefined;
}
