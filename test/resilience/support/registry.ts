import type { components } from '../../../generated/types/registry.js';
import { basicAuthorization, prefixedAuthorization } from '../../../src/wire/authorization.js';
import { registryFrom } from '../../../src/platform/registry/loadRegistry.js';
import type { Registry } from '../../../src/platform/registry/registry.js';
import { HOSTAPP_PATHS, MINIAPP_PATHS } from './fakePartner.js';

/** The one host app and one miniapp of the resilience tests, named as in the contract's examples. */
export const PARTIES = {
  appId: 'ma_7f3c2a',
  clientId: 'ha_superapp',
  miniappSecret: 'resilience-miniapp-secret',
  hostappSecret: 'resilience-hostapp-secret',
} as const;

export const miniappAuthorization = basicAuthorization(PARTIES.appId, PARTIES.miniappSecret);
export const hostappBasicAuthorization = basicAuthorization(PARTIES.clientId, PARTIES.hostappSecret);
export const hostappTokenAuthorization = prefixedAuthorization('Token', PARTIES.clientId, PARTIES.hostappSecret);

/** Registry file contents: both partners with every feature on, URLs at the fake servers. */
export function registryFile(hostappUrl: string, miniappUrl: string): components['schemas']['Registry'] {
  const features = { payments: true, event_bridge: true, event_receiver: true };
  return {
    hostapps: [
      {
        client_id: PARTIES.clientId,
        secret_key: PARTIES.hostappSecret,
        token_prefix: 'Token',
        use_access_token: false,
        payment_status_method: 'POST',
        features,
        urls: {
          create_order_payment: hostappUrl + HOSTAPP_PATHS.createOrderPayment,
          get_payment_status: hostappUrl + HOSTAPP_PATHS.paymentStatus,
          events: hostappUrl + HOSTAPP_PATHS.events,
        },
      },
    ],
    miniapps: [
      {
        app_id: PARTIES.appId,
        secret_key: PARTIES.miniappSecret,
        hostapps: [PARTIES.clientId],
        features,
        urls: { complete_order: miniappUrl + MINIAPP_PATHS.completeOrder, events: miniappUrl + MINIAPP_PATHS.events },
      },
    ],
  };
}

export function testRegistry(hostappUrl: string, miniappUrl: string): Registry {
  return registryFrom(registryFile(hostappUrl, miniappUrl));
}
