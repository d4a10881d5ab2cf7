import type { components } from '../../../generated/types/hostapp.js';
import { prefixedAuthorization } from '../../wire/credentials.js';
import { createHostappClient } from '../../shipped/clients/hostapp.js';
import type { Hostapp } from '../registry/registry.js';
import { callPartner, type PartnerOperationId, type PartnerOutcome } from './partnerCall.js';
import { clientFor, registeredFetch } from './registeredFetch.js';
import { encodeUserIdHeader } from '../../wire/userIdHeader.js';

type Schemas = components['schemas'];

/** Who the payment is for: sent as X-User-ID, and the user's token where the host app wants it. */
export interface PaymentUser {
  hostappUserId?: string;
  userAccessToken?: string;
}

/** `<prefix> base64(client_id:secret)`, or `<prefix> <user access token>` when the host app opted in. */
export function hostappAuthorization(hostapp: Hostapp, userAccessToken?: string): string {
  if (hostapp.registration.use_access_token && userAccessToken) return `${hostapp.tokenPrefix} ${userAccessToken}`;
  return prefixedAuthorization(hostapp.tokenPrefix, hostapp.id, hostapp.secretKey);
}

const clients = new WeakMap<Hostapp, Map<string, ReturnType<typeof createHostappClient>>>();

function client(hostapp: Hostapp, operationId: PartnerOperationId, url: string | undefined) {
  if (!url) return undefined;
  return clientFor(clients, hostapp, operationId, url, () =>
    createHostappClient({ baseUrl: 'http://registered-url.invalid', fetch: registeredFetch(url, hostapp.signingSecrets, operationId) }),
  );
}

function notRegistered(what: string): PartnerOutcome {
  return { ok: false, failure: { kind: 'unreachable', detail: `the host app has not registered its ${what} URL` }, durationMs: 0 };
}

function paymentHeaders(hostapp: Hostapp, user: PaymentUser): Record<string, string> {
  return {
    Authorization: hostappAuthorization(hostapp, user.userAccessToken),
    ...(user.hostappUserId !== undefined && { 'X-User-ID': encodeUserIdHeader(user.hostappUserId) }),
  };
}

/** E3. */
export function createOrderPaymentAtHostapp(
  hostapp: Hostapp,
  body: Schemas['HostappCreateOrderPaymentRequest'],
  user: PaymentUser,
): Promise<PartnerOutcome> {
  const api = client(hostapp, 'createHostappOrderPayment', hostapp.registration.urls?.create_order_payment);
  if (!api) return Promise.resolve(notRegistered('create-order-payment (E3)'));
  return callPartner('createHostappOrderPayment', (signal) =>
    api.POST('/create-order-payment', { body, headers: paymentHeaders(hostapp, user), parseAs: 'arrayBuffer', signal }),
  );
}

/** E4, by POST or GET as the host app registered. */
export function getPaymentStatusAtHostapp(
  hostapp: Hostapp,
  query: Schemas['HostappPaymentStatusRequest'],
  user: PaymentUser,
): Promise<PartnerOutcome> {
  const operationId = hostapp.registration.payment_status_method === 'GET' ? 'queryHostappPaymentStatus' : 'getHostappPaymentStatus';
  const api = client(hostapp, operationId, hostapp.registration.urls?.get_payment_status);
  if (!api) return Promise.resolve(notRegistered('get-payment-status (E4)'));
  const headers = paymentHeaders(hostapp, user);
  if (operationId === 'queryHostappPaymentStatus') {
    return callPartner(operationId, (signal) =>
      api.GET('/get-payment-status', { params: { query, header: headers as never }, headers, parseAs: 'arrayBuffer', signal }),
    );
  }
  return callPartner('getHostappPaymentStatus', (signal) =>
    api.POST('/get-payment-status', { body: query, headers, parseAs: 'arrayBuffer', signal }),
  );
}

/** E7 at a host app: an event from a miniapp. */
export function deliverEventToHostapp(hostapp: Hostapp, event: Schemas['Event'], eventId: string): Promise<PartnerOutcome> {
  const api = client(hostapp, 'receiveHostappEvent', hostapp.registration.urls?.events);
  if (!api) return Promise.resolve(notRegistered('event receiver (E7)'));
  const headers = { Authorization: hostappAuthorization(hostapp) };
  return callPartner(
    'receiveHostappEvent',
    (signal) =>
      api.POST('/events', {
        body: event,
        params: { header: { 'X-Minibridge-Event-Id': eventId } },
        headers,
        parseAs: 'arrayBuffer',
        signal,
      }),
    'forwarded',
  );
}
