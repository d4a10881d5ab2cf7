import { writeFileSync } from 'node:fs';
import type { components } from '../generated/types/registry.js';
import type { components as PlatformSchemas } from '../generated/types/platform.js';
import { basicAuthorization, prefixedAuthorization } from '../src/wire/authorization.js';
import { loadDocument, resolve } from '../src/contract/documents.js';

type CreateOrderPaymentRequest = PlatformSchemas['schemas']['CreateOrderPaymentRequest'];

export const E1_PATH = '/api/v1/orders/create-order-payment/';
export const E5_PATH = '/api/v1/orders/complete-order/';

/** The contract's full E1 example: every field, one complete item, a shipping address. */
function fullExample(): CreateOrderPaymentRequest {
  const document = loadDocument('platform');
  return resolve<{ value: CreateOrderPaymentRequest }>(document, document.components.examples!.CreateOrderPaymentFull).value;
}

export const example = fullExample();
export const parties = {
  appId: example.app_id,
  clientId: example.client_id,
  miniappSecret: 'bench-miniapp-secret',
  hostappSecret: 'bench-hostapp-secret',
};

/** E1 body with `[<id>]` as miniapp_order_id, so every request autocannon sends is a new order. */
export function e1BodyTemplate(): string {
  return JSON.stringify({ ...example, order: { ...example.order, miniapp_order_id: '[<id>]' } });
}

export function e1Body(miniappOrderId: string, appId = parties.appId): string {
  return JSON.stringify({ ...example, app_id: appId, order: { ...example.order, miniapp_order_id: miniappOrderId } });
}

/**
 * Miniapps registered beside parties.appId, with its secret and E6 URL: the E6 drain of two
 * instances spreads its payments over all four, because one miniapp's x-max-in-flight bound
 * holds across instances and would leave the second one idle.
 */
export const moreMiniapps = ['ma_bench_2', 'ma_bench_3', 'ma_bench_4'];
export const allMiniapps = [parties.appId, ...moreMiniapps];

export function miniappHeadersOf(appId: string): Record<string, string> {
  return { 'content-type': 'application/json', authorization: basicAuthorization(appId, parties.miniappSecret) };
}

export const miniappHeaders = {
  'content-type': 'application/json',
  authorization: basicAuthorization(parties.appId, parties.miniappSecret),
};
export const hostappHeaders = {
  'content-type': 'application/json',
  authorization: basicAuthorization(parties.clientId, parties.hostappSecret),
};
/** E8 takes the host app's own prefix (the registry's token_prefix, `Token` here) instead of Basic. */
export const hostappEventHeaders = {
  'content-type': 'application/json',
  authorization: prefixedAuthorization('Token', parties.clientId, parties.hostappSecret),
};

/** The registry every Minibridge contender loads: one host app, one miniapp, payments and the event bridge on. */
export function writeRegistry(file: string, hostappUrl: string, miniappUrl: string): void {
  const features = { payments: true, event_bridge: true, event_receiver: true };
  const registry: components['schemas']['Registry'] = {
    hostapps: [
      {
        client_id: parties.clientId,
        secret_key: parties.hostappSecret,
        token_prefix: 'Token',
        payment_status_method: 'POST',
        use_access_token: false,
        features,
        urls: {
          create_order_payment: `${hostappUrl}/create-order-payment`,
          get_payment_status: `${hostappUrl}/get-payment-status`,
          events: `${hostappUrl}/events`,
        },
      },
    ],
    miniapps: allMiniapps.map((appId) => ({
      app_id: appId,
      secret_key: parties.miniappSecret,
      hostapps: [parties.clientId],
      features,
      urls: { complete_order: `${miniappUrl}/complete-order`, events: `${miniappUrl}/events` },
    })),
  };
  writeFileSync(file, JSON.stringify(registry, null, 2));
}

export const E2_PATH = '/api/v1/orders/get-payment-status/';
export const E8_PATH = '/api/v1/events/hostapp/';
export const MINIAPP_EVENT_PATH = '/api/v1/events/miniapp/';

/** E2 about one order payment. */
export function e2Body(orderPaymentId: string): string {
  return JSON.stringify({ app_id: parties.appId, client_id: parties.clientId, order_payment_id: orderPaymentId });
}

/** E5 reporting one order payment paid. */
export function e5Body(orderPaymentId: string, appId = parties.appId): string {
  return JSON.stringify({ order_payment_id: orderPaymentId, app_id: appId, client_id: parties.clientId, payment_status: 'paid' });
}

/** The contract's example event of `name`, with `[<id>]` as external_event_id so every event is a new one. */
function eventTemplate(name: 'HostappEventUserProfileUpdated' | 'MiniappEventOrderStatusUpdate'): string {
  const document = loadDocument('platform');
  const event = resolve<{ value: Record<string, unknown> }>(document, document.components.examples![name]).value;
  return JSON.stringify({ ...event, external_event_id: '[<id>]' });
}

/** E8 (host app → miniapp) and the miniapp's event operation (miniapp → host app), each a new event. */
export const hostappEventTemplate = eventTemplate('HostappEventUserProfileUpdated');
export const miniappEventTemplate = eventTemplate('MiniappEventOrderStatusUpdate');
