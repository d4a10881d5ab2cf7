import { writeFileSync } from 'node:fs';
import type { components } from '../generated/types/registry.js';
import type { components as PlatformSchemas } from '../generated/types/platform.js';
import { basicAuthorization } from '../src/wire/credentials.js';
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

export function e1Body(miniappOrderId: string): string {
  return JSON.stringify({ ...example, order: { ...example.order, miniapp_order_id: miniappOrderId } });
}

export const miniappHeaders = {
  'content-type': 'application/json',
  authorization: basicAuthorization(parties.appId, parties.miniappSecret),
};
export const hostappHeaders = {
  'content-type': 'application/json',
  authorization: basicAuthorization(parties.clientId, parties.hostappSecret),
};

/** The registry every Minibridge contender loads: one host app, one miniapp, payments on. */
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
        urls: { create_order_payment: `${hostappUrl}/create-order-payment`, get_payment_status: `${hostappUrl}/get-payment-status` },
      },
    ],
    miniapps: [
      {
        app_id: parties.appId,
        secret_key: parties.miniappSecret,
        hostapps: [parties.clientId],
        features,
        urls: { complete_order: `${miniappUrl}/complete-order` },
      },
    ],
  };
  writeFileSync(file, JSON.stringify(registry, null, 2));
}
